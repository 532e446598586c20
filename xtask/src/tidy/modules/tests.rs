//! The module graph on small crates written to temporary directories, and the cycle check on a
//! small workspace with an ARCHITECTURE.md.

use std::path::Path;

use super::*;
use crate::tidy::cycles::{allowed_cycles, check_module_cycles};
use crate::tidy::tests::TempDir;

/// The cycles of the crate whose files are `files` (path under `src/`, text), as
/// `a <-> b` strings, and the problems reading it.
fn cycles_of(files: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    let dir = TempDir::new();
    for (path, text) in files {
        dir.write(&format!("krate/src/{path}"), text);
    }
    let (krate, problems) = Crate::read(&dir.0, Path::new("krate/src/lib.rs"));
    let cycles = krate.cycles().into_iter().map(|c| c.modules.join(" <-> ")).collect();
    (cycles, problems.into_iter().map(|(file, why)| format!("{}: {why}", file.display())).collect())
}

#[test]
fn two_siblings_that_use_each_other_are_a_cycle_with_its_evidence() {
    let dir = TempDir::new();
    dir.write("k/src/lib.rs", "mod a;\nmod b;\n");
    dir.write("k/src/a.rs", "use crate::b::Thing;\npub struct Other;\n");
    dir.write("k/src/b.rs", "pub struct Thing;\nfn f() -> super::a::Other { todo!() }\n");
    let (krate, problems) = Crate::read(&dir.0, Path::new("k/src/lib.rs"));
    assert!(problems.is_empty(), "{problems:?}");
    let cycles = krate.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["a", "b"]);
    let uses: Vec<(&str, &str, usize, &str)> =
        cycles[0].edges.iter().map(|(f, t, e)| (f.as_str(), t.as_str(), e.line, e.path.as_str())).collect();
    assert_eq!(uses, [("a", "b", 1, "crate::b::Thing"), ("b", "a", 2, "super::a::Other")]);
    assert_eq!(cycles[0].edges[0].2.file, Path::new("k/src/a.rs"));
}

#[test]
fn a_parent_and_its_children_are_no_cycle() {
    let (cycles, problems) = cycles_of(&[
        ("lib.rs", "mod outer;\npub use outer::Public;\nfn helper() {}\n"),
        ("outer/mod.rs", "mod inner;\npub use inner::Public;\nuse self::inner::deep;\n"),
        ("outer/inner.rs", "pub struct Public;\npub fn deep() { crate::helper(); super::super::helper(); }\n"),
    ]);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(cycles.is_empty(), "{cycles:?}");
}

#[test]
fn a_use_through_a_re_export_counts_for_the_module_that_defines_it() {
    // `a` uses `crate::Thing`, which the root re-exports from `b`: that is a use of `b`.
    let (cycles, _) = cycles_of(&[
        ("lib.rs", "mod a;\nmod b;\npub use b::Thing;\n"),
        ("a.rs", "pub fn f() -> crate::Thing { crate::Thing }\npub struct A;\n"),
        ("b.rs", "pub struct Thing;\nuse crate::a::A;\n"),
    ]);
    assert_eq!(cycles, ["a <-> b"]);
}

#[test]
fn three_modules_in_a_ring_are_one_cycle_and_a_chain_is_none() {
    let ring = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ("b.rs", "use crate::c::C;\npub struct B;\n"),
        ("c.rs", "use crate::a::A;\npub struct C;\n"),
    ];
    assert_eq!(cycles_of(&ring).0, ["a <-> b <-> c"]);
    let chain = [ring[0], ring[1], ring[2], ("c.rs", "pub struct C;\n")];
    assert!(cycles_of(&chain).0.is_empty());
}

#[test]
fn nested_siblings_are_named_by_their_full_path() {
    let (cycles, _) = cycles_of(&[
        ("lib.rs", "pub mod net;\n"),
        ("net.rs", "mod x;\nmod y;\n"),
        ("net/x.rs", "use super::y::Y;\npub struct X;\n"),
        ("net/y.rs", "use super::x::{self, X};\npub struct Y;\n"),
    ]);
    assert_eq!(cycles, ["net::x <-> net::y"]);
}

#[test]
fn test_code_comments_and_strings_are_not_uses() {
    let (cycles, _) = cycles_of(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub struct A;\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod inline { use crate::b::B; }\n"),
        ("a/tests.rs", "use crate::b::B;\n"),
        (
            "b.rs",
            "//! See [`crate::a::A`].\npub struct B;\n/* crate::a::A */\nconst S: &str = \"crate::a::A\";\n\
             const R: &str = r#\"super::a::A\"#;\n#[cfg(test)]\nfn helper() -> crate::a::A { crate::a::A }\n\
             use crate::a;\n",
        ),
    ]);
    // Only `b`'s last line is a use of `a`: no cycle.
    assert!(cycles.is_empty(), "{cycles:?}");
}

#[test]
fn an_inline_module_uses_what_its_own_paths_name() {
    let (cycles, _) = cycles_of(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub struct A;\nmod helpers {\n    use crate::b::B;\n}\n"),
        ("b.rs", "pub struct B;\nuse crate::a::A;\n"),
    ]);
    assert_eq!(cycles, ["a <-> b"], "a::helpers -> b and b -> a");
}

#[test]
fn a_module_without_a_file_is_reported() {
    let (_, problems) = cycles_of(&[("lib.rs", "mod gone;\nmod here;\n"), ("here.rs", "")]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("module `gone` has no file"), "{problems:?}");
}

#[test]
fn uses_outside_the_crate_are_no_edges_and_a_glob_uses_its_module() {
    let (cycles, problems) = cycles_of(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use std::fmt;\nuse serde::Serialize;\nuse crate::b::*;\npub struct A;\n"),
        ("b.rs", "use crate::a::A;\n"),
    ]);
    // `use crate::b::*` names module `b` itself: that is a use of `b`.
    assert_eq!(cycles, ["a <-> b"]);
    assert!(problems.is_empty());
}

/// A workspace of one member, `k`, with a cycle between `a` and `b`, and `architecture` as its
/// ARCHITECTURE.md.
fn workspace_with_a_cycle(architecture: &str) -> Vec<String> {
    let dir = TempDir::new();
    dir.write("Cargo.toml", "[workspace]\nmembers = [\"k\"]\n");
    dir.write("k/src/lib.rs", "//! K.\nmod a;\nmod b;\n");
    dir.write("k/src/a.rs", "use crate::b::B;\npub struct A;\n");
    dir.write("k/src/b.rs", "use crate::a::A;\npub struct B;\n");
    dir.write("ARCHITECTURE.md", architecture);
    let mut out = Vec::new();
    check_module_cycles(&dir.0, &mut out);
    out.iter().map(ToString::to_string).collect()
}

#[test]
fn a_cycle_architecture_md_names_is_allowed_and_one_it_does_not_is_not() {
    let found = workspace_with_a_cycle("# Architecture\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with(&format!("{}: module cycle in k: a <-> b;", Path::new("k/src/a.rs").display())));
    assert!(found[0].contains("a -> b (k/src/a.rs:1 `crate::b::B`); b -> a (k/src/b.rs:1 `crate::a::A`)"), "{found:?}");
    let allowed = "# Architecture\n\n### Module cycles\n\n- `k`: `b` <-> `a`: they are one thing.\n\n## Next\n";
    assert_eq!(workspace_with_a_cycle(allowed), Vec::<String>::new());
}

#[test]
fn a_named_cycle_that_is_gone_is_reported() {
    let dir = TempDir::new();
    dir.write("Cargo.toml", "[workspace]\nmembers = [\"k\"]\n");
    dir.write("k/src/lib.rs", "//! K.\nmod a;\n");
    dir.write("k/src/a.rs", "");
    dir.write("ARCHITECTURE.md", "### Module cycles\n\n- `k`: `a` <-> `b`: no longer true.\n");
    let mut out = Vec::new();
    check_module_cycles(&dir.0, &mut out);
    let found: Vec<String> = out.iter().map(ToString::to_string).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("ARCHITECTURE.md: `### Module cycles` allows a cycle in k that the code no longer has")
    );
}

#[test]
fn the_allow_list_is_read_from_its_section_only() {
    let text = "- `x`: `p` <-> `q`: before the section\n### Module cycles\n\nSome prose.\n\
                - `mcp-manager`: `connection::a` <-> `connection::b` <-> `connection::c`: why\n\
                - `k`: `lonely`: one module is no cycle\n- not an entry\n## Later\n- `y`: `r` <-> `s`: after\n";
    let allowed = allowed_cycles(text);
    assert_eq!(allowed.len(), 1, "{allowed:?}");
    assert_eq!(allowed[0].krate, "mcp-manager");
    assert_eq!(
        allowed[0].modules.iter().map(String::as_str).collect::<Vec<_>>(),
        ["connection::a", "connection::b", "connection::c"]
    );
    assert!(allowed_cycles("no section here").is_empty());
}
