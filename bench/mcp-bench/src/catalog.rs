//! What our bench server (`bench-server`, over stdio or streamable HTTP) lists and answers,
//! written straight out as JSON text: building thousands of `Tool` values and
//! encoding them would make the server, not the client, dominate the listing workload.
//!
//! `tools/list` gives [`Catalog::tools`] tools, [`Catalog::page_size`] a page (cursor `page-K`):
//! `echo` and `big` first, then generated tools `tool-00000` .. shaped like the ones rmcp's
//! `#[tool]` macros and schemars make (a description, an object schema of two properties, about
//! 300 bytes each). Every name starts with [`Catalog::prefix`]. `echo {text}` answers `text` as
//! one text block, `big` one text block of [`Catalog::big_mib`] MiB of `x`, a generated tool
//! `no results`. `bench/rmcp/server` (rmcp's side) lists and answers the same.

use std::io::{self, Write};

/// The two tools every listing starts with.
const NAMED_TOOLS: usize = 2;

/// What a server lists and how it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// Tools listed, `echo` and `big` included (at least those two are).
    pub tools: usize,
    /// Tools a page.
    pub page_size: usize,
    /// The size of `big`'s answer, in MiB.
    pub big_mib: usize,
    /// Put before every tool's name.
    pub prefix: String,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog { tools: 10_002, page_size: 100, big_mib: 8, prefix: String::new() }
    }
}

/// A tool of the catalog, by what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Answers its `text` argument.
    Echo,
    /// Answers [`Catalog::big_mib`] MiB of `x`.
    Big,
    /// A generated tool (it answers `no results`).
    Generated,
}

impl Catalog {
    /// The catalog the flags describe (`--tools N`, `--page-size P`, `--big-mib M`,
    /// `--prefix P`), and the flags it does not know, in order.
    pub fn from_flags(args: impl IntoIterator<Item = String>) -> Result<(Catalog, Vec<String>), String> {
        let mut catalog = Catalog::default();
        let (mut args, mut rest) = (args.into_iter(), Vec::new());
        while let Some(flag) = args.next() {
            if !matches!(flag.as_str(), "--tools" | "--page-size" | "--big-mib" | "--prefix") {
                rest.push(flag);
                continue;
            }
            let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = || value.parse::<usize>().map_err(|_| format!("{flag}: not a number: {value:?}"));
            match flag.as_str() {
                "--tools" => catalog.tools = number()?,
                "--page-size" => catalog.page_size = number()?.max(1),
                "--big-mib" => catalog.big_mib = number()?,
                _ => catalog.prefix = value,
            }
        }
        Ok((catalog, rest))
    }

    /// How many tools are listed.
    pub fn listed(&self) -> usize {
        self.tools.max(NAMED_TOOLS)
    }

    /// How many pages the listing takes.
    pub fn pages(&self) -> usize {
        self.listed().div_ceil(self.page_size.max(1))
    }

    /// The page a `tools/list` cursor asks for (none: the first); `None` for a cursor this
    /// catalog never gave.
    pub fn page_of(&self, cursor: Option<&str>) -> Option<usize> {
        match cursor {
            None => Some(0),
            Some(c) => {
                c.strip_prefix("page-").and_then(|k| k.parse::<usize>().ok()).filter(|&k| k > 0 && k < self.pages())
            }
        }
    }

    /// What tool `name` is, if the catalog has it.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        let name = name.strip_prefix(self.prefix.as_str())?;
        match name {
            "echo" => Some(Tool::Echo),
            "big" => Some(Tool::Big),
            _ => {
                let i: usize = name.strip_prefix("tool-").filter(|n| n.len() == 5)?.parse().ok()?;
                (i < self.listed() - NAMED_TOOLS).then_some(Tool::Generated)
            }
        }
    }

    /// The result of `tools/list` for `page` as JSON text; `tail` goes before its closing brace
    /// (`,"resultType":"complete"` in the modern era).
    pub fn write_page(&self, out: &mut impl Write, page: usize, tail: &[u8]) -> io::Result<()> {
        let size = self.page_size.max(1);
        let tools = page * size..((page + 1) * size).min(self.listed());
        out.write_all(br#"{"tools":["#)?;
        for i in tools.clone() {
            if i != tools.start {
                out.write_all(b",")?;
            }
            self.write_tool(out, i)?;
        }
        out.write_all(b"]")?;
        if page + 1 < self.pages() {
            write!(out, r#","nextCursor":"page-{}""#, page + 1)?;
        }
        out.write_all(tail)?;
        out.write_all(b"}")
    }

    /// Listed tool number `i` as JSON text.
    fn write_tool(&self, out: &mut impl Write, i: usize) -> io::Result<()> {
        let p = &self.prefix;
        match i {
            0 => write!(
                out,
                concat!(
                    r#"{{"name":"{p}echo","description":"Echo the text back as one text block","#,
                    r#""inputSchema":{{"type":"object","properties":{{"text":{{"type":"string","#,
                    r#""description":"The text to send back."}}}},"required":["text"]}}}}"#
                ),
                p = p
            ),
            1 => write!(
                out,
                concat!(
                    r#"{{"name":"{p}big","description":"Answer with one large text block of x characters","#,
                    r#""inputSchema":{{"type":"object","properties":{{}}}}}}"#
                ),
                p = p
            ),
            _ => write!(
                out,
                concat!(
                    r#"{{"name":"{p}tool-{i:05}","description":"Generated tool number {i}: takes a query and a "#,
                    r#"limit, returns matches.","inputSchema":{{"type":"object","properties":{{"query":{{"#,
                    r#""type":"string","description":"What to look for"}},"limit":{{"type":"integer","#,
                    r#""minimum":1,"maximum":100}}}},"required":["query"]}}}}"#
                ),
                p = p,
                i = i - NAMED_TOOLS
            ),
        }
    }

    /// The result of `big` as JSON text, written a MiB at a time from `chunk` (a MiB of `x`);
    /// `tail` as for [`Catalog::write_page`].
    pub fn write_big(&self, out: &mut impl Write, chunk: &[u8], tail: &[u8]) -> io::Result<()> {
        out.write_all(br#"{"content":[{"type":"text","text":""#)?;
        for _ in 0..self.big_mib {
            out.write_all(chunk)?;
        }
        out.write_all(br#""}]"#)?;
        out.write_all(tail)?;
        out.write_all(b"}")
    }
}

/// A MiB of `x`, what [`Catalog::write_big`] repeats.
pub fn big_chunk() -> Vec<u8> {
    vec![b'x'; 1024 * 1024]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn page(catalog: &Catalog, k: usize, tail: &[u8]) -> Value {
        let mut out = Vec::new();
        catalog.write_page(&mut out, k, tail).unwrap();
        serde_json::from_slice(&out).expect("a page is JSON")
    }

    #[test]
    fn the_listing_holds_every_tool_once_over_its_pages() {
        let catalog = Catalog { tools: 10_002, page_size: 100, big_mib: 8, prefix: "s1-".into() };
        assert_eq!(catalog.pages(), 101);
        let (mut names, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let k = catalog.page_of(cursor.as_deref()).expect("a cursor the catalog gave");
            let page = page(&catalog, k, b"");
            for tool in page["tools"].as_array().unwrap() {
                let name = tool["name"].as_str().unwrap().to_owned();
                assert!(catalog.tool(&name).is_some(), "{name} is callable");
                assert!(tool["inputSchema"]["type"] == "object", "{tool}");
                names.push(name);
            }
            match page.get("nextCursor") {
                Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
                None => break,
            }
        }
        assert_eq!(names.len(), 10_002);
        assert_eq!(&names[..3], ["s1-echo", "s1-big", "s1-tool-00000"]);
        assert_eq!(names.last().unwrap(), "s1-tool-09999");
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 10_002, "no name twice");
    }

    #[test]
    fn unknown_cursors_and_names_are_refused() {
        let catalog = Catalog { tools: 250, ..Catalog::default() };
        assert_eq!(catalog.pages(), 3);
        for cursor in ["page-3", "page-0", "page--1", "page-x", "", "3"] {
            assert_eq!(catalog.page_of(Some(cursor)), None, "{cursor:?}");
        }
        assert_eq!(catalog.page_of(Some("page-2")), Some(2));
        assert_eq!(catalog.tool("tool-00247"), Some(Tool::Generated));
        for name in ["tool-00248", "tool-1", "echoes", "s1-echo", "tool-0000x"] {
            assert_eq!(catalog.tool(name), None, "{name}");
        }
        assert_eq!(catalog.tool("echo"), Some(Tool::Echo));
        assert_eq!(catalog.tool("big"), Some(Tool::Big));
    }

    #[test]
    fn a_tiny_catalog_still_lists_echo_and_big_and_the_tail_lands_inside() {
        let catalog = Catalog { tools: 0, ..Catalog::default() };
        let only = page(&catalog, 0, br#","resultType":"complete""#);
        assert_eq!(only["tools"].as_array().unwrap().len(), 2);
        assert_eq!(only["resultType"], "complete");
        assert!(only.get("nextCursor").is_none());
    }

    #[test]
    fn big_writes_its_mebibytes_of_x_as_one_text_block() {
        let catalog = Catalog { big_mib: 2, ..Catalog::default() };
        let mut out = Vec::new();
        catalog.write_big(&mut out, &big_chunk(), b"").unwrap();
        let result: Value = serde_json::from_slice(&out).unwrap();
        let text = result["content"][0]["text"].as_str().unwrap();
        assert_eq!(text.len(), 2 * 1024 * 1024);
        assert!(text.bytes().all(|b| b == b'x'));
    }

    #[test]
    fn flags_set_the_catalog_and_the_rest_come_back() {
        let args = ["--tools", "7", "--http", "0", "--prefix", "s2-", "--page-size", "0"].map(String::from);
        let (catalog, rest) = Catalog::from_flags(args).unwrap();
        assert_eq!(catalog, Catalog { tools: 7, page_size: 1, big_mib: 8, prefix: "s2-".into() });
        assert_eq!(rest, ["--http", "0"]);
        let err = Catalog::from_flags(["--tools", "many"].map(String::from)).unwrap_err();
        assert!(err.contains("--tools") && err.contains("many"), "{err}");
        let err = Catalog::from_flags(["--big-mib"].map(String::from)).unwrap_err();
        assert!(err.contains("needs a value"), "{err}");
    }
}
