//! The built `mcp` binary, each subcommand against the built-in demo server (no config file in
//! a fresh temporary working directory), `--json` output parsed, the exit codes of bad input,
//! and `chat` against a fake OpenAI-compatible server.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tests::fake_llm::{FakeLlm, Reply};

fn mcp_in(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp"));
    c.current_dir(dir).env_remove("OPENAI_API_KEY").stdin(Stdio::null());
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let output = mcp_in(dir).args(args).output().expect("mcp runs");
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn json_of(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_readme_quick_start_command_lists_the_demo_tools() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let command = "cargo run --release -p mcp-cli -- tools";
    assert!(readme.contains(command), "the README's quick start names `{command}`");
    // The same command line, with the binary cargo built for this test.
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), &["tools"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for tool in ["echo", "add", "current_time", "stats", "image", "slow", "ask_roots", "summarize"] {
        assert!(stdout.contains(tool), "{tool} missing from:\n{stdout}");
    }
    assert!(stdout.contains("demo__echo"), "LLM-facing names are shown");
    assert!(stderr(&output).contains("built-in demo server"), "the fallback is announced on stderr");
}

#[test]
fn every_listing_has_a_stable_json_shape() {
    let dir = tempfile::tempdir().unwrap();
    let tools = json_of(&run(dir.path(), &["tools", "--json"]));
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"add") && names.contains(&"stats"), "{names:?}");
    let prompts = json_of(&run(dir.path(), &["prompts", "--json"]));
    assert_eq!(prompts["prompts"][0]["name"], "review_code");
    let resources = json_of(&run(dir.path(), &["resources", "--json"]));
    assert!(resources["resources"].as_array().unwrap().iter().any(|r| r["uri"] == "demo://readme"));
    let templates = json_of(&run(dir.path(), &["templates", "--json"]));
    assert_eq!(templates["templates"][0]["uriTemplate"], "demo://greeting/{name}");
    let status = json_of(&run(dir.path(), &["status", "--json"]));
    let demo = &status["servers"][0];
    assert_eq!((demo["name"].as_str(), demo["state"].as_str()), (Some("demo"), Some("ready")));
    assert_eq!(demo["protocolVersion"], "2026-07-28", "auto negotiation picks the modern era");
    assert_eq!(demo["tools"], 8);
}

#[test]
fn call_prompt_and_read_return_real_results() {
    let dir = tempfile::tempdir().unwrap();
    let add = json_of(&run(dir.path(), &["call", "add", "a=2", "b=3.5", "--json"]));
    assert_eq!((add["server"].as_str(), add["isError"].as_bool()), (Some("demo"), Some(false)));
    assert!(add["content"][0]["text"].as_str().unwrap().contains("5.5"), "{add}");
    // The same through --args and the LLM-facing name.
    let echo = json_of(&run(dir.path(), &["call", "demo__echo", "--args", r#"{"text": "hi there"}"#, "--json"]));
    assert_eq!(echo["content"][0]["text"], "hi there");
    let stats = json_of(&run(dir.path(), &["call", "stats", "numbers=[1,2,3,4]", "--json"]));
    assert_eq!(stats["structuredContent"]["count"], 4, "{stats}");
    let prompt = json_of(&run(dir.path(), &["prompt", "review_code", "code=fn main() {}", "language=rust", "--json"]));
    assert!(prompt.to_string().contains("fn main() {}"), "{prompt}");
    let read = json_of(&run(dir.path(), &["read", "demo://greeting/Ann", "--json"]));
    assert!(read.to_string().contains("Hello, Ann!"), "{read}");
    let save = dir.path().join("out");
    let image = run(dir.path(), &["call", "image", "--save", save.to_str().unwrap()]);
    assert_eq!(image.status.code(), Some(0), "{}", stderr(&image));
    let stdout = String::from_utf8_lossy(&image.stdout);
    assert!(stdout.contains("[image: image/png"), "summarised, not dumped: {stdout}");
    let saved: Vec<_> = std::fs::read_dir(&save).unwrap().collect();
    assert_eq!(saved.len(), 1);
}

#[test]
fn the_demo_skill_is_listed_and_loaded_verified() {
    let dir = tempfile::tempdir().unwrap();
    let listed = run(dir.path(), &["skills"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let table = String::from_utf8_lossy(&listed.stdout);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("demo-arithmetic  demo"), "{table}");
    let doc = json_of(&run(dir.path(), &["skills", "--json"]));
    assert!(doc.to_string().contains("skill://demo-arithmetic/SKILL.md"), "{doc}");

    let loaded = run(dir.path(), &["skill", "demo-arithmetic"]);
    assert_eq!(loaded.status.code(), Some(0), "{}", stderr(&loaded));
    let text = String::from_utf8_lossy(&loaded.stdout);
    assert!(text.starts_with("---\nname: demo-arithmetic\n"), "the SKILL.md itself: {text}");
    assert!(text.contains("call the `add` tool"), "{text}");

    let files = json_of(&run(dir.path(), &["skill", "demo-arithmetic", "--json"]));
    let files = files["files"].as_array().expect("the files");
    let paths: Vec<&str> = files.iter().filter_map(|f| f["path"].as_str()).collect();
    assert_eq!(paths, ["SKILL.md", "examples.md"]);
    assert!(files.iter().all(|f| f["digest"].as_str().is_some_and(|d| d.starts_with("sha256:"))), "{files:?}");

    let unknown = run(dir.path(), &["skill", "no-such-skill"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("no server lists a skill \"no-such-skill\""), "{}", stderr(&unknown));
}

#[test]
fn key_value_pairs_take_the_types_of_the_input_schema() {
    let dir = tempfile::tempdir().unwrap();
    // `stats` takes an array of numbers; `current_time` an integer offset; `slow` integers.
    let out = json_of(&run(dir.path(), &["call", "stats", "numbers=1.5,2.5", "--json"]));
    assert_eq!(out["structuredContent"]["sum"], 4.0);
    let slow = json_of(&run(dir.path(), &["call", "slow", "duration_ms=10", "steps=2", "--json"]));
    assert_eq!(slow["isError"], false, "{slow}");
    let wrong = run(dir.path(), &["call", "add", "a=two", "b=1"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains("\"a\"") && stderr(&wrong).contains("number"), "{}", stderr(&wrong));
}

#[test]
fn bad_input_gives_one_clear_line_and_the_documented_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = run(dir.path(), &["call", "no_such_tool"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("unknown tool \"no_such_tool\""), "{}", stderr(&unknown));
    let bad_json = run(dir.path(), &["call", "add", "--args", "{not json"]);
    assert_eq!(bad_json.status.code(), Some(1));
    assert!(stderr(&bad_json).contains("line 1, column"), "{}", stderr(&bad_json));
    let missing = run(dir.path(), &["--config", "nowhere.json", "tools"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("nowhere.json"), "{}", stderr(&missing));
    // A tool error (the demo's add with a non-number sneaked past coercion as raw JSON).
    let tool_error = run(dir.path(), &["call", "echo", "--args", r#"{"text": 5}"#]);
    assert_eq!(tool_error.status.code(), Some(1), "the input schema check refuses it first: {}", stderr(&tool_error));
}

#[test]
fn unreachable_and_failing_servers_exit_with_4() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let unreachable = run(dir.path(), &["--url", &url, "tools"]);
    assert_eq!(unreachable.status.code(), Some(4), "{}", stderr(&unreachable));
    assert!(stderr(&unreachable).contains("127.0.0.1"), "{}", stderr(&unreachable));
    let failing = run(dir.path(), &["--stdio", "tools", "--", "/bin/sh", "-c", "echo cannot-start-here >&2; exit 3"]);
    assert_eq!(failing.status.code(), Some(4), "{}", stderr(&failing));
    assert!(stderr(&failing).contains("cannot-start-here"), "the server's stderr tail: {}", stderr(&failing));
    assert_eq!(stderr(&failing).lines().count(), 1, "one line: {}", stderr(&failing));
}

#[test]
fn a_refused_url_is_shown_without_its_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let refused = run(dir.path(), &["--url", "ftp://alice:hunter2@example.invalid/mcp?token=s3cr3t-value", "tools"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let text = stderr(&refused);
    assert!(text.contains("must be http or https"), "{text}");
    assert!(text.contains("example.invalid"), "names the URL: {text}");
    assert!(!text.contains("hunter2") && !text.contains("s3cr3t-value"), "leaks a credential: {text}");
}

#[test]
fn a_config_file_in_the_working_directory_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        "first": {"command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve-demo"]},
        // comments and trailing commas are fine in desktop JSON; this one is written as plain JSON
        "second": {"command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve-demo"]}
    }});
    std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();
    let status = json_of(&run(dir.path(), &["status", "--json"]));
    let names: Vec<&str> = status["servers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["first", "second"]);
    assert_eq!(status["servers"][1]["tools"], 0, "every tool name is taken by the first server");
    let one = json_of(&run(dir.path(), &["--server", "second", "tools", "--json"]));
    assert!(one["tools"].as_array().unwrap().iter().all(|t| t["server"] == "second"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_lets_the_llm_call_a_demo_tool_and_prints_its_answer() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::tool_calls(&[("call-1", "demo__add", r#"{"a": 20, "b": 22}"#)]));
        llm.push(Reply::text("The sum is 42."));
        let dir = tempfile::tempdir().unwrap();
        let mut child = mcp_in(dir.path())
            .args(["chat", "--base-url", &llm.base_url(), "--model", "fake-model"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"what is 20 + 22?\n").unwrap();
        let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", stderr(&output));
        assert!(stdout.contains("demo__add"), "the call is shown: {stdout}");
        assert!(stdout.contains("20 + 22 = 42"), "its result is shown: {stdout}");
        assert!(stdout.contains("The sum is 42."), "the answer is printed: {stdout}");
        let requests = llm.requests();
        assert_eq!(requests.len(), 2);
        let tools = requests[0].body["tools"].as_array().unwrap();
        assert!(tools.iter().any(|t| t["function"]["name"] == "demo__add"));
        let last = requests[1].body["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((last["role"].as_str(), last["tool_call_id"].as_str()), (Some("tool"), Some("call-1")));
        assert!(last["content"].to_string().contains("42"), "{last}");
    })
    .await
    .expect("test timed out");
}

#[test]
fn a_huge_timeout_is_refused_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for huge in ["1e19", "18446744073709551616", "inf"] {
        let output = run(dir.path(), &["call", "echo", "text=x", "--timeout", huge]);
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{huge}: {said}");
        assert!(said.contains("--timeout") && said.contains(huge), "{huge}: {said}");
        assert!(!said.contains("panicked") && !said.contains("internal error"), "{huge}: {said}");
    }
    // A timeout in range bounds the command: the slow demo tool is given up on, with code 7.
    let output = run(dir.path(), &["call", "slow", "duration_ms=20000", "--timeout", "0.5"]);
    assert_eq!(output.status.code(), Some(7), "{}", stderr(&output));
    assert!(stderr(&output).contains("timed out after 500ms (--timeout)"), "{}", stderr(&output));
    let output = run(dir.path(), &["call", "echo", "text=x", "--timeout", "30"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn servers_given_on_the_command_line_are_named_after_what_they_run_or_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mcp = env!("CARGO_BIN_EXE_mcp");
    // The demo server behind a launcher: `env VAR=1 <program>` is named after the program.
    let tools = json_of(&run(dir.path(), &["--json", "--stdio", "tools", "--", "env", "DEMO=1", mcp, "serve-demo"]));
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["llmName"].as_str().unwrap()).collect();
    assert!(names.contains(&"mcp__echo"), "not env__echo: {names:?}");
    let tools = json_of(&run(dir.path(), &["--json", "--stdio", "--name", "demo2", "tools", "--", mcp, "serve-demo"]));
    assert_eq!(tools["tools"][0]["server"], "demo2", "{tools}");
    assert!(tools["tools"][0]["llmName"].as_str().unwrap().starts_with("demo2__"), "{tools}");
}

#[test]
fn json_errors_are_one_json_object_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = run(dir.path(), &["--json", "call", "no_such_tool"]);
    assert_eq!(unknown.status.code(), Some(1));
    let error = &json_of_failure(&unknown)["error"];
    assert_eq!(error["exitCode"], 1);
    assert_eq!(error["kind"], "not_found");
    assert!(error["message"].as_str().unwrap().contains("no_such_tool"), "{error}");
    let said = stderr(&unknown);
    assert!(said.lines().any(|l| l.starts_with("mcp: unknown tool")), "the line for people stays: {said}");
    // A usage error of the command line itself, and one without --json: stdout stays empty.
    let usage = run(dir.path(), &["--json", "frobnicate"]);
    assert_eq!(json_of_failure(&usage)["error"]["exitCode"], 1);
    assert!(run(dir.path(), &["call", "no_such_tool"]).stdout.is_empty());
}

fn json_of_failure(output: &Output) -> Value {
    assert_ne!(output.status.code(), Some(0));
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

#[test]
fn hidden_tools_are_reported_and_reachable_as_server_slash_tool() {
    let dir = tempfile::tempdir().unwrap();
    let mcp = env!("CARGO_BIN_EXE_mcp");
    let config = json!({"mcpServers": {
        "first": {"command": mcp, "args": ["serve-demo"]},
        "second": {"command": mcp, "args": ["serve-demo"]},
    }});
    std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();

    let tools = run(dir.path(), &["tools"]);
    assert_eq!(tools.status.code(), Some(0), "{}", stderr(&tools));
    let warning = stderr(&tools);
    let line = warning.lines().find(|l| l.contains(r#"server "second""#)).expect("a warning for the hidden server");
    assert!(line.contains(r#"hidden by server "first""#) && line.contains("echo"), "{line}");
    assert!(line.contains("--server second") && line.contains("second/TOOL"), "{line}");
    assert_eq!(warning.lines().filter(|l| l.contains("hidden by")).count(), 1, "one line per hidden server: {warning}");

    let status = json_of(&run(dir.path(), &["status", "--json"]));
    let second = &status["servers"][1];
    assert_eq!(second["name"], "second");
    assert!(second["hidden"].as_array().unwrap().iter().any(|h| h == &json!({"tool": "echo", "hiddenBy": "first"})));
    assert!(status["servers"][0]["hidden"].as_array().unwrap().is_empty());

    // SERVER/TOOL reaches the hidden tool: only that server is started.
    let call = json_of(&run(dir.path(), &["call", "second/echo", "text=via second", "--json"]));
    assert_eq!(call["server"], "second");
    assert_eq!(call["content"][0]["text"], "via second");
    let unknown = run(dir.path(), &["call", "nobody/echo", "text=x"]);
    assert_eq!(unknown.status.code(), Some(1), "not a server: an unknown tool: {}", stderr(&unknown));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_answers_sampling_with_the_configured_llm_and_says_how_to_configure_one() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::text("A fox jumps."));
        let dir = tempfile::tempdir().unwrap();
        let text = "The quick brown fox jumps over the lazy dog.";
        let output = mcp_in(dir.path())
            .args(["call", "summarize", &format!("text={text}")])
            .env("OPENAI_BASE_URL", llm.base_url())
            .env("OPENAI_MODEL", "fake-model")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(String::from_utf8_lossy(&output.stdout).contains("A fox jumps."), "the LLM's summary is the result");
        let requests = llm.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].body["model"], "fake-model");
        assert!(requests[0].body["messages"].to_string().contains("lazy dog"), "the server's request reached the LLM");

        // The same LLM from the config's [mcp.client.sampling] instead of the environment.
        llm.push(Reply::text("From the config."));
        let mcp = env!("CARGO_BIN_EXE_mcp");
        let toml = format!(
            "[[mcp.servers]]\nname = \"demo\"\ncommand = \"{mcp}\"\nargs = [\"serve-demo\"]\n\
             [mcp.client.sampling]\nmodel = \"config-model\"\nbase_url = \"{}\"\n",
            llm.base_url()
        );
        std::fs::write(dir.path().join("mcp.toml"), toml).unwrap();
        let output = mcp_in(dir.path())
            .args(["--config", "mcp.toml", "call", "summarize", "text=anything"])
            .env_remove("OPENAI_MODEL")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(String::from_utf8_lossy(&output.stdout).contains("From the config."));
        assert_eq!(llm.requests()[1].body["model"], "config-model");

        // No LLM at all: declined, and the user is told how to configure one.
        let output = mcp_in(dir.path())
            .args(["call", "summarize", "text=anything"])
            .env_remove("OPENAI_MODEL")
            .env_remove("MCP_LLM_MODEL")
            .output()
            .unwrap();
        assert_ne!(output.status.code(), Some(0));
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), stderr(&output));
        assert!(said.contains("[mcp.client.sampling]") && said.contains("OPENAI_MODEL"), "{said}");
        assert_eq!(llm.requests().len(), 2, "the LLM was not asked");
    })
    .await
    .expect("test timed out");
}
