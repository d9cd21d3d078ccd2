//! Who holds a reservation, and whether that holder is still there.
//!
//! A running run records its host, pid and the process's identity (boot id and start
//! time). A later run on the same host can then tell a dead holder (no such process, or
//! the pid now belongs to another process) from a live one without waiting for a lease
//! to run out. On another host only the lease can tell. On PostgreSQL none of that is
//! used for a running run: it is alive exactly while its database session is.

use std::fs;

/// This process, as it is recorded on its run.
#[derive(Debug, Clone)]
pub struct Identity {
    pub host: String,
    pub pid: u32,
    /// `boot_id/start_ticks`; empty where /proc is not available.
    pub started: String,
}

impl Identity {
    pub fn current() -> Self {
        let pid = std::process::id();
        Identity {
            host: hostname(),
            pid,
            started: process_started(pid).unwrap_or_default(),
        }
    }
}

/// What a later run concludes about a holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// Gone, and why (for the reclaim record).
    Dead(String),
}

/// The facts of a holding run, from `live_runs.sql`.
pub struct Holder<'a> {
    pub run_id: i64,
    pub status: &'a str,
    pub host: Option<&'a str>,
    pub pid: Option<i64>,
    pub started: Option<&'a str>,
    /// The latest expiry among its reservations; None when it holds none with a lease.
    pub lease_until: Option<&'a str>,
    /// Whether that expiry has passed, by the database's clock.
    pub lease_expired: bool,
    /// Whether it holds dates with no expiry at all (a `reserve` without `--for`).
    pub unexpiring: bool,
    /// PostgreSQL: whether the run's session still holds its advisory lock. None on
    /// SQLite, where the process tells.
    pub session_alive: Option<bool>,
}

/// A running run on this host is alive exactly when its process is; otherwise (a planned
/// reservation, or a run on another host) the lease decides.
pub fn liveness(holder: &Holder, me: &Identity) -> Liveness {
    // PostgreSQL: any run but a planned reservation is alive exactly while its session is
    // (a run that has ended holds a date only while that date is in flight).
    if let (Some(alive), false) = (holder.session_alive, holder.status == "reserved") {
        return if alive {
            Liveness::Alive
        } else {
            Liveness::Dead(format!(
                "its database session is gone (it ran as process {} on {})",
                holder
                    .pid
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "?".into()),
                holder.host.unwrap_or("?")
            ))
        };
    }
    if holder.status == "running"
        && holder.session_alive.is_none()
        && holder.host == Some(me.host.as_str())
        && !me.started.is_empty()
    {
        if let (Some(pid), Some(started)) = (holder.pid, holder.started) {
            return match process_started(pid as u32) {
                Some(now) if now == started => Liveness::Alive,
                Some(_) => Liveness::Dead(format!(
                    "its process {pid} on {} is gone (the pid now belongs to another process)",
                    me.host
                )),
                None => Liveness::Dead(format!("its process {pid} on {} is gone", me.host)),
            };
        }
    }
    if holder.unexpiring {
        return Liveness::Alive;
    }
    if holder.lease_expired {
        return Liveness::Dead(format!(
            "its lease expired at {}",
            holder.lease_until.unwrap_or_default()
        ));
    }
    Liveness::Alive
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".to_string())
}

/// `boot_id/start_ticks` of a live process: the start time (field 22 of /proc/PID/stat)
/// tells a reused pid from the original, the boot id a pid from before a reboot. None
/// when there is no such process, or only its zombie.
fn process_started(pid: u32) -> Option<String> {
    let boot = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    // A killed process its parent has not reaped yet is a zombie: gone all the same.
    if matches!(fields.next()?, "Z" | "X" | "x") {
        return None;
    }
    let start_ticks = fields.nth(18)?;
    Some(format!("{}/{start_ticks}", boot.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_missing_one_is_not() {
        let me = Identity::current();
        if me.started.is_empty() {
            return; // no /proc here
        }
        let holder = |pid: i64, started: &'static str| Holder {
            run_id: 1,
            status: "running",
            host: None,
            pid: Some(pid),
            started: Some(started),
            lease_until: None,
            lease_expired: false,
            unexpiring: false,
            session_alive: None,
        };
        let started: &'static str = Box::leak(me.started.clone().into_boxed_str());
        let host: &'static str = Box::leak(me.host.clone().into_boxed_str());
        let alive = Holder {
            host: Some(host),
            ..holder(me.pid as i64, started)
        };
        assert_eq!(liveness(&alive, &me), Liveness::Alive);
        let reused = Holder {
            host: Some(host),
            ..holder(me.pid as i64, "other-boot/1")
        };
        assert!(matches!(liveness(&reused, &me), Liveness::Dead(_)));
        let gone = Holder {
            host: Some(host),
            ..holder(i32::MAX as i64, started)
        };
        assert!(matches!(liveness(&gone, &me), Liveness::Dead(_)));
    }

    #[test]
    fn leases_decide_elsewhere() {
        let me = Identity::current();
        let planned = |lease: Option<&'static str>, expired, unexpiring| Holder {
            run_id: 1,
            status: "reserved",
            host: None,
            pid: None,
            started: None,
            lease_until: lease,
            lease_expired: expired,
            unexpiring,
            session_alive: None,
        };
        assert_eq!(liveness(&planned(None, false, true), &me), Liveness::Alive);
        assert_eq!(
            liveness(&planned(Some("2999-01-01 00:00:00"), false, false), &me),
            Liveness::Alive
        );
        assert!(matches!(
            liveness(&planned(Some("2000-01-01 00:00:00"), true, false), &me),
            Liveness::Dead(_)
        ));
    }

    #[test]
    fn on_postgres_the_session_decides() {
        let me = Identity::current();
        let running = |alive| Holder {
            run_id: 1,
            status: "running",
            host: Some("elsewhere"),
            pid: Some(1),
            started: Some("x/1"),
            lease_until: Some("2000-01-01 00:00:00"),
            lease_expired: true,
            unexpiring: false,
            session_alive: Some(alive),
        };
        assert_eq!(liveness(&running(true), &me), Liveness::Alive);
        assert!(matches!(liveness(&running(false), &me), Liveness::Dead(_)));
    }
}
