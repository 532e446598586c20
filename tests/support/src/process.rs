//! Process checks that read `/proc` (Linux): whether a process still exists, waiting until it is
//! gone (exited and reaped), and the pids a test script prints.

use std::time::Duration;

/// The state letter of a process (`R`, `S`, `Z`, ...) from `/proc/<pid>/stat`; `None` when there
/// is no such process (it was reaped).
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself hold ')': the state follows the last one.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.trim_start().chars().next()
}

/// Wait until `/proc/<pid>` is gone (the process exited and was reaped), polling for at most
/// `limit`. A zombie does not count as gone. Errors with the last state seen.
pub async fn wait_until_gone(pid: u32, limit: Duration) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let state = match process_state(pid) {
            None => return Ok(()),
            Some(s) => s,
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(format!("process {pid} still exists after {limit:?} (state {state})"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The number after `key=` in lines such as `grandchild-pid=123`.
pub fn value_after(lines: &[String], key: &str) -> Option<u32> {
    let prefix = format!("{key}=");
    lines.iter().find_map(|l| l.strip_prefix(&prefix)?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_running_and_a_free_pid_is_not() {
        let state = process_state(std::process::id()).expect("this process exists");
        assert!(matches!(state, 'R' | 'S' | 'D'), "{state}");
        // Above the kernel's pid_max (at most 2^22): never a process.
        assert_eq!(process_state(u32::MAX), None);
    }

    #[tokio::test]
    async fn a_reaped_child_is_gone_and_a_living_one_is_not() {
        crate::within(a_reaped_child_is_gone()).await;
    }

    async fn a_reaped_child_is_gone() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep runs");
        let pid = child.id();
        let err = wait_until_gone(pid, Duration::from_millis(50)).await.unwrap_err();
        assert!(err.contains(&format!("process {pid} still exists")), "{err}");
        child.kill().unwrap();
        // Killed but not yet reaped: a zombie is not gone.
        while process_state(pid) != Some('Z') {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(wait_until_gone(pid, Duration::from_millis(50)).await.unwrap_err().contains("state Z"));
        child.wait().unwrap();
        wait_until_gone(pid, Duration::from_secs(5)).await.unwrap();
    }

    #[test]
    fn values_are_read_after_their_key() {
        let lines = ["noise".to_owned(), "grandchild-pid= 42 ".to_owned(), "other=7".to_owned()];
        assert_eq!(value_after(&lines, "grandchild-pid"), Some(42));
        assert_eq!(value_after(&lines, "other"), Some(7));
        assert_eq!(value_after(&lines, "missing"), None);
        assert_eq!(value_after(&["pid=x".to_owned()], "pid"), None);
    }
}
