//! Widening a server's pipes, for lines of megabytes.
//!
//! A pipe holds 64 KiB by default ([`DEFAULT_PIPE`]): a server that writes a line of megabytes
//! fills it, waits until the client has read it, fills it again, and each time both processes
//! are put to sleep and woken (an 8 MiB result: 128 such turns); a large request does the same the
//! other way. The reader widens the server's stdout to [`WIDE_PIPE`] when a line first runs past
//! 64 KiB ([`LineReader::widening`](super::lines::LineReader::widening)), and the writer widens
//! its stdin at the first line longer than 64 KiB, so that one side writes on while the other
//! reads. Only pipes that carry such lines are widened: Linux counts every pipe's capacity
//! against its user's limits (`/proc/sys/fs/pipe-user-pages-soft`), and a host of a hundred
//! quiet servers should not spend them.

/// What a pipe holds unless it is widened, on Linux.
pub(crate) const DEFAULT_PIPE: usize = 64 * 1024;

/// The capacity a widened pipe asks for: 1 MiB, what Linux lets any user set
/// (`/proc/sys/fs/pipe-max-size`) unless the administrator lowered it.
pub(crate) const WIDE_PIPE: usize = 1024 * 1024;

/// Ask for `pipe` to hold [`WIDE_PIPE`] bytes; whether it does now. A refusal (a lower
/// `pipe-max-size`, a user over its limit) leaves the pipe as it was and is only logged: the
/// pipe still works, in smaller steps.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn widen(pipe: &impl std::os::fd::AsFd) -> bool {
    use nix::fcntl::{FcntlArg, fcntl};
    let wide = i32::try_from(WIDE_PIPE).unwrap_or(i32::MAX);
    match fcntl(pipe, FcntlArg::F_SETPIPE_SZ(wide)) {
        Ok(size) => usize::try_from(size).is_ok_and(|size| size >= WIDE_PIPE),
        Err(e) => {
            tracing::debug!(error = %e, "a pipe to or from the server could not be widened; it is used as it is");
            false
        }
    }
}

/// Pipes keep their size where there is no way to change it.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn widen<P>(_pipe: &P) -> bool {
    false
}

/// The most a user may make a pipe hold, per this machine's settings (`None` if they cannot be
/// read): where it is at least [`WIDE_PIPE`], a widening must succeed.
#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
pub(crate) fn pipe_max_size() -> Option<usize> {
    std::fs::read_to_string("/proc/sys/fs/pipe-max-size").ok()?.trim().parse().ok()
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use nix::fcntl::{FcntlArg, fcntl};

    use super::*;

    #[test]
    fn a_pipe_is_widened_to_what_it_asks_for_or_left_as_it_was() {
        let (read, _write) = nix::unistd::pipe().expect("a pipe");
        let before = fcntl(&read, FcntlArg::F_GETPIPE_SZ).expect("the pipe's size");
        let widened = widen(&read);
        let after = usize::try_from(fcntl(&read, FcntlArg::F_GETPIPE_SZ).expect("the pipe's size")).unwrap();
        if widened {
            assert_eq!(after, WIDE_PIPE);
        } else {
            assert_eq!(after, usize::try_from(before).unwrap(), "a refused widening changed the pipe");
        }
        // Linux's default lets every user set 1 MiB: there the widening must happen.
        if pipe_max_size().is_some_and(|max| max >= WIDE_PIPE) {
            assert!(widened, "pipe-max-size allows {WIDE_PIPE} bytes, yet the pipe holds {after}");
        }
    }
}
