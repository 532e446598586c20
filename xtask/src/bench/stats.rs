//! The pure arithmetic of the bench tables: reading the clients' JSON lines, medians, and ratios
//! paired round by round.

type Result<T = ()> = std::result::Result<T, String>;

/// The median of `key` over the JSON lines of a cell's runs.
pub(crate) fn median(lines: &[String], key: &str) -> Result<f64> {
    let values = lines.iter().map(|line| value(line, key)).collect::<Result<Vec<f64>>>()?;
    middle(values).ok_or_else(|| format!("no runs for {key:?}"))
}

/// The median of the ratios a/b of `key` round by round. Both variants ran in each round, back
/// to back, so a round's ratio compares them under the same load on a shared machine; the median
/// of those ratios is steadier than the ratio of the two medians.
pub(crate) fn paired_ratio(a: &[String], b: &[String], key: &str) -> Result<f64> {
    if a.len() != b.len() {
        return Err(format!("{} runs against {} for {key:?}", a.len(), b.len()));
    }
    let ratios = a.iter().zip(b).map(|(a, b)| Ok(value(a, key)? / value(b, key)?)).collect::<Result<Vec<f64>>>()?;
    middle(ratios).ok_or_else(|| format!("no runs for {key:?}"))
}

/// The number under `key` in one JSON line; an error naming the key and the line.
pub(crate) fn value(line: &str, key: &str) -> Result<f64> {
    number(line, key).ok_or_else(|| format!("no number {key:?} in {line}"))
}

/// The median of `values`, if there are any.
pub(crate) fn middle(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The number under `"key":` in a flat JSON object (the clients print nothing nested).
pub(crate) fn number(line: &str, key: &str) -> Option<f64> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = line[at..].trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// The string under `"key":` in a flat JSON object, unescaped only as far as the clients need
/// (protocol versions and era names hold no escapes).
pub(crate) fn string(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = line[at..].trim_start().strip_prefix('"')?;
    rest.find('"').map(|end| rest[..end].to_owned())
}

/// A figure for a table: whole numbers from 100 up, two decimals below.
pub(crate) fn fmt(value: f64) -> String {
    if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.2}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(values: &[f64]) -> Vec<String> {
        values.iter().map(|v| format!(r#"{{"client":"ours","total_ms":{v},"era":"modern"}}"#)).collect()
    }

    #[test]
    fn medians_take_the_middle_or_the_mean_of_the_two_middles() {
        assert_eq!(median(&lines(&[5.0, 1.0, 3.0]), "total_ms").unwrap(), 3.0);
        assert_eq!(median(&lines(&[4.0, 1.0, 3.0, 2.0]), "total_ms").unwrap(), 2.5);
        assert!(median(&[], "total_ms").unwrap_err().contains("no runs"));
        let err = median(&lines(&[1.0]), "cpu_ms").unwrap_err();
        assert!(err.contains("\"cpu_ms\"") && err.contains("total_ms"), "{err}");
    }

    #[test]
    fn ratios_are_paired_round_by_round_not_taken_from_the_medians() {
        // Round 2 ran under load for both: its ratio is still 1.0.
        let a = lines(&[10.0, 100.0, 12.0]);
        let b = lines(&[20.0, 100.0, 12.0]);
        assert_eq!(paired_ratio(&a, &b, "total_ms").unwrap(), 1.0);
        // The ratio of the medians would be 12/20 = 0.6.
        assert_eq!(median(&a, "total_ms").unwrap() / median(&b, "total_ms").unwrap(), 0.6);
        let err = paired_ratio(&a, &b[..2], "total_ms").unwrap_err();
        assert!(err.contains("3 runs against 2"), "{err}");
    }

    #[test]
    fn numbers_and_strings_are_read_from_flat_json_and_broken_lines_give_none() {
        let line = r#"{"total_ms": 12.5,"peak_rss_kib":4096,"protocol_version":"2026-07-28","last":7}"#;
        assert_eq!(number(line, "total_ms"), Some(12.5));
        assert_eq!(number(line, "peak_rss_kib"), Some(4096.0));
        assert_eq!(number(line, "last"), Some(7.0));
        assert_eq!(number(line, "protocol_version"), None);
        assert_eq!(number(line, "missing"), None);
        assert_eq!(number(r#"{"total_ms":"#, "total_ms"), None);
        assert_eq!(string(line, "protocol_version").as_deref(), Some("2026-07-28"));
        assert_eq!(string(line, "total_ms"), None);
        assert_eq!(string(r#"{"era":"unterminated"#, "era"), None);
        assert_eq!((fmt(1234.56), fmt(12.346)), ("1235".to_owned(), "12.35".to_owned()));
    }
}
