//! Civil time for the `current_time` tool: the proleptic Gregorian calendar from Unix seconds
//! (Howard Hinnant's `civil_from_days`), a fixed UTC offset, and a few output formats.

/// A UTC offset in minutes, parsed from `Z`, `UTC`, `+02:00`, `-0530` or `+2`.
pub(crate) fn parse_offset(text: &str) -> Result<i32, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("z") || t.eq_ignore_ascii_case("utc") {
        return Ok(0);
    }
    let bad = || format!("{text:?} is not a UTC offset (expected Z, +HH:MM or -HH:MM)");
    let (sign, rest) = match t.as_bytes().first() {
        Some(b'+') => (1, &t[1..]),
        Some(b'-') => (-1, &t[1..]),
        _ => return Err(bad()),
    };
    let (hours, minutes) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    let hours: i32 = hours.parse().map_err(|_| bad())?;
    let minutes: i32 = minutes.parse().map_err(|_| bad())?;
    if !(0..=14).contains(&hours) || !(0..60).contains(&minutes) || hours * 60 + minutes > 14 * 60 {
        return Err(format!("{text:?} is out of range (offsets run from -14:00 to +14:00)"));
    }
    Ok(sign * (hours * 60 + minutes))
}

/// An offset as `+HH:MM` (`Z` for zero).
pub(crate) fn format_offset(minutes: i32) -> String {
    if minutes == 0 {
        return "Z".into();
    }
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// A moment in civil time at a fixed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
    /// 0 = Monday .. 6 = Sunday.
    pub(crate) weekday: u32,
    pub(crate) offset_minutes: i32,
}

const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

impl Civil {
    /// `unix` seconds seen at `offset_minutes` from UTC.
    pub(crate) fn at(unix: i64, offset_minutes: i32) -> Civil {
        let local = unix + i64::from(offset_minutes) * 60;
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            // 1970-01-01 was a Thursday (3).
            weekday: (days + 3).rem_euclid(7) as u32,
            offset_minutes,
        }
    }

    /// RFC 3339, e.g. `2026-07-28T09:30:00+02:00`.
    pub(crate) fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            format_offset(self.offset_minutes)
        )
    }

    /// The day's name.
    pub(crate) fn weekday_name(&self) -> &'static str {
        WEEKDAYS[self.weekday as usize % 7]
    }

    /// For people, e.g. `Tuesday 28 July 2026, 09:30:00 (UTC+02:00)`.
    pub(crate) fn human(&self) -> String {
        const MONTHS: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        let offset = if self.offset_minutes == 0 { String::new() } else { format_offset(self.offset_minutes) };
        format!(
            "{} {} {} {}, {:02}:{:02}:{:02} (UTC{offset})",
            self.weekday_name(),
            self.day,
            MONTHS[(self.month as usize).saturating_sub(1) % 12],
            self.year,
            self.hour,
            self.minute,
            self.second
        )
    }
}

/// Year, month (1-12) and day (1-31) of the day `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_instants() {
        assert_eq!(Civil::at(0, 0).rfc3339(), "1970-01-01T00:00:00Z");
        assert_eq!(Civil::at(0, 0).weekday_name(), "Thursday");
        // 2000-02-29 12:34:56 UTC, a leap day.
        let leap = Civil::at(951_827_696, 0);
        assert_eq!(leap.rfc3339(), "2000-02-29T12:34:56Z");
        assert_eq!(leap.weekday_name(), "Tuesday");
        assert_eq!(Civil::at(951_827_696, 150).rfc3339(), "2000-02-29T15:04:56+02:30");
        assert_eq!(Civil::at(951_827_696, -780).rfc3339(), "2000-02-28T23:34:56-13:00");
        assert_eq!(Civil::at(-1, 0).rfc3339(), "1969-12-31T23:59:59Z");
        assert_eq!(Civil::at(1_785_231_000, 0).human(), "Tuesday 28 July 2026, 09:30:00 (UTC)");
        assert_eq!(Civil::at(1_785_231_000, 120).human(), "Tuesday 28 July 2026, 11:30:00 (UTC+02:00)");
    }

    #[test]
    fn offsets_parse_and_reject() {
        assert_eq!(parse_offset("Z"), Ok(0));
        assert_eq!(parse_offset("utc"), Ok(0));
        assert_eq!(parse_offset("+02:00"), Ok(120));
        assert_eq!(parse_offset("-0530"), Ok(-330));
        assert_eq!(parse_offset("+9"), Ok(540));
        assert_eq!(parse_offset("+14:00"), Ok(840));
        for bad in ["", "02:00", "+15:00", "+14:30", "+1:99", "+ab"] {
            assert!(parse_offset(bad).is_err(), "{bad:?}");
        }
        assert_eq!(format_offset(-330), "-05:30");
        assert_eq!(format_offset(0), "Z");
    }
}
