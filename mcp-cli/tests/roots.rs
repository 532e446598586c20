//! What `mcp` shares as roots: nothing unless asked (the working directory is not offered, and
//! the roots capability is not declared), exactly the `--root` directories, or the config's
//! `[mcp.client] roots`; in both protocol eras. The built-in demo server's `ask_roots` tool
//! reports what the client shares (legacy era: a `roots/list` request; modern era: an input
//! request).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(60);

fn mcp(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp runs");
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcp {args:?} did not end within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `mcp ARGS call ask_roots --json`: the demo's answer, as text, and whether it is an error.
fn ask_roots(dir: &Path, args: &[&str]) -> (bool, String) {
    let args: Vec<&str> = args.iter().copied().chain(["call", "ask_roots", "--json"]).collect();
    let output = mcp(dir, &args);
    let code = output.status.code();
    assert!(matches!(code, Some(0 | 2)), "mcp {args:?}: {code:?}: {}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (result["isError"] == true, text)
}

/// The URI a root for `dir` has (the canonical path).
fn uri(dir: &Path) -> String {
    format!("file://{}", std::fs::canonicalize(dir).unwrap().display())
}

/// A reference TOML config running the demo server in `era`, with `roots` under `[mcp.client]`.
fn toml_config(dir: &Path, era: &str, roots: &[String]) -> String {
    let path = dir.join(format!("mcp-{era}-{}.toml", roots.len()));
    let roots: Vec<String> = roots.iter().map(|r| format!("{r:?}")).collect();
    let text = format!(
        "[mcp.client]\nroots = [{}]\n\n[[mcp.servers]]\nname = \"demo\"\ncommand = {:?}\nargs = [\"serve-demo\"]\nera = {era:?}\n",
        roots.join(", "),
        env!("CARGO_BIN_EXE_mcp"),
    );
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn without_a_root_the_working_directory_is_not_shared() {
    let dir = tempfile::tempdir().unwrap();
    // The built-in demo (auto: the modern era), and the legacy era through a config.
    let legacy = toml_config(dir.path(), "legacy", &[]);
    for args in [&[][..], &["--config", &legacy]] {
        let (failed, text) = ask_roots(dir.path(), args);
        assert!(failed, "{args:?}: {text}");
        assert!(text.contains("did not declare the roots capability"), "{args:?}: {text}");
        assert!(!text.contains(&uri(dir.path())), "{args:?}: the working directory leaked: {text}");
    }
}

#[test]
fn the_root_flag_shares_exactly_the_given_directories() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let legacy = toml_config(dir.path(), "legacy", &[]);
    let modern = toml_config(dir.path(), "modern", &[]);
    for config in [&legacy, &modern] {
        // Relative to the working directory, and given twice: shared once, as a canonical URI.
        let args = ["--config", config.as_str(), "--root", "a", "--root", b.to_str().unwrap(), "--root", "./a"];
        let (failed, text) = ask_roots(dir.path(), &args);
        assert!(!failed, "{config}: {text}");
        assert_eq!(text, format!("The client shares 2 roots:\n- {}\n- {}", uri(&a), uri(&b)), "{config}");
    }
}

#[test]
fn config_roots_are_shared_and_the_flag_replaces_them() {
    let dir = tempfile::tempdir().unwrap();
    let configured = dir.path().join("configured");
    let flagged = dir.path().join("flagged");
    std::fs::create_dir_all(&configured).unwrap();
    std::fs::create_dir_all(&flagged).unwrap();
    for era in ["legacy", "modern"] {
        let config = toml_config(dir.path(), era, &[uri(&configured)]);
        let (failed, text) = ask_roots(dir.path(), &["--config", &config]);
        assert!(!failed, "{era}: {text}");
        assert_eq!(text, format!("The client shares 1 root:\n- {}", uri(&configured)), "{era}");
        let (_, text) = ask_roots(dir.path(), &["--config", &config, "--root", flagged.to_str().unwrap()]);
        assert_eq!(text, format!("The client shares 1 root:\n- {}", uri(&flagged)), "{era}");
    }
}

#[test]
fn a_bad_root_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "x").unwrap();
    for (root, says) in [("missing-dir", "missing-dir"), ("file.txt", "file.txt is not a directory")] {
        let output = mcp(dir.path(), &["--root", root, "tools"]);
        assert_eq!(output.status.code(), Some(1), "{root}: {}", stderr(&output));
        assert!(stderr(&output).contains(&format!("--root {says}")), "{root}: {}", stderr(&output));
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn help_says_what_servers_get() {
    let output = mcp(Path::new("."), &["--help"]);
    let help = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0));
    for needed in ["What servers get from mcp:", "--root DIR", "never offered unasked", "Sampling", "elicitation"] {
        assert!(help.contains(needed), "--help lacks {needed:?}:\n{help}");
    }
}
