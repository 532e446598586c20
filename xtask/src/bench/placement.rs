//! `--placement free|split|shared`: which CPUs a matrix run's client and servers may use.
//!
//! Left free (the default, what every earlier table measured), the scheduler puts a client and
//! its server on one CPU in some runs and on two in others, and a sequential workload's time
//! differs between the two by more than the targets' margins (W1 over stdio, our client against
//! the hand-written one: 1.22 on one CPU, 1.10 on two). `split` runs every client on one CPU and
//! every server on another; `shared` runs both on one CPU. Every variant gets the same placement,
//! so a ratio compares like with like, and its spread from run to run is the clients' own.
//!
//! The CPUs are the first two that xtask itself may use (`Cpus_allowed_list` in
//! `/proc/self/status`); the processes are started under `taskset -c <cpu>` (util-linux), which
//! sets the affinity and then runs the program in its place (no process in between). A stdio
//! server, which the client starts, gets the wrapper in the command the client is given.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

type Result<T = ()> = std::result::Result<T, String>;

/// Where the clients and the servers of a matrix run may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Wherever the scheduler puts them.
    Free,
    /// The clients on one CPU, the servers on another.
    Split,
    /// The clients and the servers on one CPU.
    Shared,
}

impl Placement {
    pub(crate) fn parse(value: &str) -> Result<Placement> {
        match value {
            "free" => Ok(Placement::Free),
            "split" => Ok(Placement::Split),
            "shared" => Ok(Placement::Shared),
            _ => Err(format!("--placement: expected free, split or shared, not {value:?}")),
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Placement::Free => "placement left to the scheduler",
            Placement::Split => "every client on one CPU, every server on another (--placement split)",
            Placement::Shared => "every client and server on one CPU (--placement shared)",
        }
    }

    /// The CPUs this placement pins to, chosen among `allowed` (in the order the system lists
    /// them): `None` for `free`.
    pub(crate) fn cpus(self, allowed: &[u32]) -> Result<Option<Cpus>> {
        match (self, allowed) {
            (Placement::Free, _) => Ok(None),
            (Placement::Shared, [cpu, ..]) => Ok(Some(Cpus { client: *cpu, server: *cpu })),
            (Placement::Split, [client, server, ..]) => Ok(Some(Cpus { client: *client, server: *server })),
            _ => Err(format!(
                "--placement {}: this process may run on {} CPU(s) ({allowed:?}), which is too few",
                if self == Placement::Split { "split" } else { "shared" },
                allowed.len()
            )),
        }
    }

    /// [`Placement::cpus`] among the CPUs this process may use; checks that `taskset` runs.
    pub(crate) fn resolve(self) -> Result<Option<Cpus>> {
        if self == Placement::Free {
            return Ok(None);
        }
        let status = std::fs::read_to_string("/proc/self/status")
            .map_err(|e| format!("--placement needs /proc/self/status to find the CPUs: {e}"))?;
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .ok_or("--placement: /proc/self/status has no Cpus_allowed_list line")?;
        let cpus = self.cpus(&cpu_list(list)?)?;
        let taskset = Command::new("taskset").arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status();
        match taskset {
            Ok(status) if status.success() => Ok(cpus),
            Ok(status) => Err(format!("--placement needs taskset (util-linux): `taskset -V` failed ({status})")),
            Err(e) => Err(format!("--placement needs taskset (util-linux), which could not be started: {e}")),
        }
    }
}

/// The CPUs a placement pins to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cpus {
    pub(crate) client: u32,
    pub(crate) server: u32,
}

/// `program args...`, run on `cpu` when there is one: `taskset -c <cpu> program args...`.
pub(crate) fn pinned(cpu: Option<u32>, program: &Path, args: &[OsString]) -> (OsString, Vec<OsString>) {
    match cpu {
        None => (program.as_os_str().to_owned(), args.to_vec()),
        Some(cpu) => {
            let mut all = vec![OsString::from("-c"), OsString::from(cpu.to_string()), program.as_os_str().to_owned()];
            all.extend(args.iter().cloned());
            (OsString::from("taskset"), all)
        }
    }
}

/// The CPUs of a list as the kernel writes them (`0-3,8,10-11`), in its order.
pub(crate) fn cpu_list(text: &str) -> Result<Vec<u32>> {
    let mut cpus = Vec::new();
    let bad = || format!("not a CPU list: {:?}", text.trim());
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        let (first, last): (u32, u32) = (first.parse().map_err(|_| bad())?, last.parse().map_err(|_| bad())?);
        if last < first || last - first > 4096 {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    if cpus.is_empty() { Err(bad()) } else { Ok(cpus) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_cpu_lists_parse_in_order() {
        assert_eq!(cpu_list("0-1\n").unwrap(), vec![0, 1]);
        assert_eq!(cpu_list("3").unwrap(), vec![3]);
        assert_eq!(cpu_list("0-2,8,10-11").unwrap(), vec![0, 1, 2, 8, 10, 11]);
        for bad in ["", "a-b", "3-1", "0-99999", "1,,x"] {
            let err = cpu_list(bad).unwrap_err();
            assert!(err.contains("not a CPU list"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn each_placement_picks_its_cpus_or_says_there_are_too_few() {
        assert_eq!(Placement::parse("free").unwrap().cpus(&[0, 1]).unwrap(), None);
        assert_eq!(Placement::parse("split").unwrap().cpus(&[2, 5, 7]).unwrap(), Some(Cpus { client: 2, server: 5 }));
        assert_eq!(Placement::parse("shared").unwrap().cpus(&[4, 5]).unwrap(), Some(Cpus { client: 4, server: 4 }));
        let err = Placement::Split.cpus(&[0]).unwrap_err();
        assert!(err.contains("split") && err.contains("1 CPU"), "{err}");
        assert!(Placement::Shared.cpus(&[]).is_err());
        assert!(Placement::parse("pinned").unwrap_err().contains("free, split or shared"));
    }

    #[test]
    fn a_pinned_command_runs_under_taskset_and_a_free_one_as_it_is() {
        let args = [OsString::from("w1"), OsString::from("legacy")];
        let (program, all) = pinned(None, Path::new("/b/client"), &args);
        assert_eq!((program.as_os_str(), all.as_slice()), (Path::new("/b/client").as_os_str(), &args[..]));
        let (program, all) = pinned(Some(3), Path::new("/b/client"), &args);
        assert_eq!(program, "taskset");
        assert_eq!(all, ["-c", "3", "/b/client", "w1", "legacy"].map(OsString::from));
    }
}
