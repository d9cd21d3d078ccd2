//! The throwaway PostgreSQL server of a test binary (initdb and postgres as the postgres
//! user, a unix socket in a temp folder, stopped with the test process), and reading its
//! values the way `Sandbox::rows` normalises them. A submodule of support.rs.
use std::error::Error;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use postgres::types::{FromSql, Type};

/// The database every sandbox of this binary gets a schema in.
pub const DATABASE: &str = "sqlrun_test";
/// The prefix of the server's folder in the temp dir; the test process's pid follows.
const PREFIX: &str = "sqlrun-pg-";

pub struct Server {
    /// Data dir, socket and log live here.
    pub base: PathBuf,
    pub url: String,
    pid: u32,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
/// How the server process ended, once it has (set by the thread that started it).
static ENDED: Mutex<Option<String>> = Mutex::new(None);

/// The server, started the first time it is asked for. Panics (every time) if it
/// cannot be started.
pub fn server() -> &'static Server {
    match SERVER.get_or_init(start) {
        Ok(server) => server,
        Err(why) => panic!("the PostgreSQL test server is not available: {why}"),
    }
}

impl Server {
    /// A session on the test database with `search_path` set to `schema`.
    pub fn connect(&self, schema: &str) -> postgres::Client {
        let mut client = config(&self.base, DATABASE)
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| {
                panic!(
                    "cannot connect to the test server: {}{}",
                    error_text(&e),
                    server_state()
                )
            });
        client
            .batch_execute(&format!(
                "SET search_path TO \"{schema}\"; SET TimeZone TO 'UTC';"
            ))
            .unwrap();
        client
    }
}

fn config(sock: &Path, db: &str) -> postgres::Config {
    let mut config = postgres::Config::new();
    config
        .host_path(sock)
        .user("postgres")
        .dbname(db)
        .application_name("sqlrun-tests")
        .connect_timeout(Duration::from_secs(30));
    config
}

/// The message of a PostgreSQL error, with its detail and position if any.
pub fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{}: {}", db.severity(), db.message());
            if let Some(detail) = db.detail() {
                s.push_str(&format!(" (detail: {detail})"));
            }
            if let Some(hint) = db.hint() {
                s.push_str(&format!(" (hint: {hint})"));
            }
            s
        }
        None => match e.source() {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// "" while the server runs; else how it ended and the end of its log.
pub fn server_state() -> String {
    let ended = ENDED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match (ended, SERVER.get()) {
        (Some(how), Some(Ok(server))) => format!(
            "\nthe test server is gone ({how}); its log ends with:\n{}",
            log_tail(&server.base)
        ),
        (Some(how), _) => format!("\nthe test server is gone ({how})"),
        _ => String::new(),
    }
}

fn log_tail(base: &Path) -> String {
    let log = fs::read_to_string(base.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

const INSTALL: &str = "install PostgreSQL (Debian/Ubuntu: `apt-get install postgresql`; \
                       .ci/run does this when initdb is missing)";

/// initdb and postgres: a folder holding both, from PATH (following the symlinks that
/// Debian's postgresql-common puts there) or /usr/lib/postgresql/*/bin, newest first.
pub fn bin_dir() -> Result<PathBuf, String> {
    let mut candidates = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let initdb = dir.join("initdb");
            if initdb.is_file() {
                if let Some(real) = fs::canonicalize(&initdb)
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf))
                {
                    candidates.push(real);
                }
                candidates.push(dir);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    candidates.extend(versions.into_iter().map(|(_, p)| p));
    candidates
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())
        .ok_or_else(|| {
            format!(
                "PostgreSQL is not installed: the PostgreSQL tests need `initdb` and \
                 `postgres` (on PATH or in /usr/lib/postgresql/*/bin): {INSTALL}"
            )
        })
}

/// initdb and postgres refuse to run as root: as root they run as the `postgres` user
/// (uid, gid); as anyone else, as that user (None).
pub fn server_user() -> Result<Option<(u32, u32)>, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let id = |flag: &str| -> Result<u32, String> {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .map_err(|e| format!("cannot run `id`: {e}"))?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| {
                format!(
                    "the tests run as root and initdb/postgres refuse root, so the server \
                     runs as the `postgres` user, and there is none: {INSTALL} (it \
                     creates that user)"
                )
            })
    };
    Ok(Some((id("-u")?, id("-g")?)))
}

/// Whether a process exists and is not a zombie (in a container whose init does not
/// reap, a killed test process stays a zombie).
pub fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) state ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) if Path::new("/proc/self/stat").exists() => false,
        // SAFETY: signal 0 only checks that the process exists.
        Err(_) => {
            let found = unsafe { libc::kill(pid, 0) } == 0;
            found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        }
    }
}

/// Removes the folders of earlier test processes that are gone, whose server is gone
/// too (a server is stopped with its test process; this is for a process that was
/// killed before it could remove its folder). Anything still alive is left alone.
fn remove_stale(tmp: &Path) {
    let Ok(entries) = fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid as u32 == std::process::id() || alive(pid) {
            continue;
        }
        let postmaster = fs::read_to_string(entry.path().join("data/postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<i32>().ok()));
        if postmaster.is_some_and(alive) {
            continue;
        }
        let _ = fs::remove_dir_all(entry.path());
    }
}

fn start() -> Result<Server, String> {
    let bin = bin_dir()?;
    let user = server_user()?;
    // The socket's path (this folder + "/.s.PGSQL.5432") must fit in 107 bytes.
    let mut tmp = std::env::temp_dir();
    if tmp.as_os_str().len() > 60 {
        tmp = PathBuf::from("/tmp");
    }
    remove_stale(&tmp);

    let base = tmp.join(format!("{PREFIX}{}", std::process::id()));
    if base.exists() {
        // left by an earlier process with this pid, which is gone since it is us now
        fs::remove_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    }
    fs::create_dir(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    fs::set_permissions(&base, fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("{}: {e}", base.display()))?;
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&base, Some(uid), Some(gid))
            .map_err(|e| format!("chown postgres {}: {e}", base.display()))?;
    }
    let as_server_user = |cmd: &mut Command| {
        if let Some((uid, gid)) = user {
            cmd.uid(uid).gid(gid);
        }
        cmd.current_dir(&base)
            .env_remove("PGDATA")
            .env("LC_ALL", "C")
            .stdin(Stdio::null());
    };

    let data = base.join("data");
    let mut initdb = Command::new(bin.join("initdb"));
    initdb
        .arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
        .args(["--no-locale", "--no-sync", "--no-instructions"]);
    as_server_user(&mut initdb);
    die_with_parent(&mut initdb, libc::SIGKILL);
    let out = initdb
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.join("initdb").display()))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    let log = fs::File::create(base.join("server.log")).map_err(|e| e.to_string())?;
    let mut postgres = Command::new(bin.join("postgres"));
    postgres.arg("-D").arg(&data).arg("-k").arg(&base);
    for setting in [
        "listen_addresses=",
        "max_connections=300",
        "fsync=off",
        "synchronous_commit=off",
        "full_page_writes=off",
        "TimeZone=UTC",
        "log_timezone=UTC",
    ] {
        postgres.args(["-c", setting]);
    }
    as_server_user(&mut postgres);
    postgres
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    let pid = spawn_tied(postgres)?;
    let server = Server {
        url: format!(
            "postgresql:///{DATABASE}?host={}&user=postgres",
            base.display()
        ),
        base,
        pid,
    };
    // SAFETY: registers a plain extern "C" fn; see stop_at_exit.
    unsafe { libc::atexit(stop_at_exit) };

    // Ready when it takes a connection; then the test database.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut client = loop {
        if let Some(how) = ENDED.lock().unwrap().clone() {
            return Err(format!(
                "postgres exited at start ({how}); its log:\n{}",
                log_tail(&server.base)
            ));
        }
        match config(&server.base, "postgres").connect(postgres::NoTls) {
            Ok(client) => break client,
            Err(e) if Instant::now() > deadline => {
                return Err(format!(
                    "postgres did not take connections within 60 s: {}; its log:\n{}",
                    error_text(&e),
                    log_tail(&server.base)
                ))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    client
        .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
        .map_err(|e| format!("CREATE DATABASE {DATABASE}: {}", error_text(&e)))?;
    Ok(server)
}

/// Starts `cmd` from a thread that never ends, with the parent-death signal set to
/// SIGQUIT (a PostgreSQL immediate shutdown): the kernel sends it when that thread
/// ends, which is when the test process ends, however it ends. The thread waits for
/// the server and records how it ended. Returns the pid.
fn spawn_tied(mut cmd: Command) -> Result<u32, String> {
    die_with_parent(&mut cmd, libc::SIGQUIT);
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("postgres-server".into())
        .spawn(move || {
            match cmd.spawn() {
                Ok(mut child) => {
                    let _ = tx.send(Ok(child.id()));
                    let how = match child.wait() {
                        Ok(status) => status.to_string(),
                        Err(e) => e.to_string(),
                    };
                    *ENDED.lock().unwrap_or_else(|e| e.into_inner()) = Some(how);
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start postgres: {e}")));
                }
            }
            // Never end: the server's parent-death signal is tied to this thread.
            loop {
                std::thread::park();
            }
        })
        .map_err(|e| e.to_string())?;
    rx.recv().map_err(|e| e.to_string())?
}

/// Makes the kernel send `signal` to the process `cmd` starts when the thread that
/// starts it ends.
pub fn die_with_parent(cmd: &mut Command, signal: libc::c_int) {
    let parent = std::process::id();
    // SAFETY: the closure calls only async-signal-safe functions (prctl, getppid, _exit).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The test process died between fork and prctl: no signal will come.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// At the test process's normal exit: stop the server (immediate shutdown) and remove
/// its folder. Should this not run (the process is killed), the parent-death signal
/// still stops the server, and the next run removes the folder.
extern "C" fn stop_at_exit() {
    let Some(Ok(server)) = SERVER.get() else {
        return;
    };
    // SAFETY: a plain signal to the server's pid, which this process started.
    unsafe { libc::kill(server.pid as i32, libc::SIGQUIT) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let ended = match ENDED.try_lock() {
            Ok(guard) => guard.is_some(),
            Err(_) => false,
        };
        if ended {
            let _ = fs::remove_dir_all(&server.base);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every row as normalised text.
pub fn render(rows: &[postgres::Row]) -> Result<Vec<Vec<String>>, postgres::Error> {
    rows.iter()
        .map(|row| {
            (0..row.len())
                .map(|i| row.try_get::<_, Cell>(i).map(|c| c.0))
                .collect()
        })
        .collect()
}

/// One value as backend-neutral text: date `YYYY-MM-DD`, timestamptz UTC
/// `YYYY-MM-DD HH:MM:SS`, boolean `1`/`0`, numeric without a fraction as an integer,
/// NULL as `NULL`.
pub struct Cell(pub String);

type BoxError = Box<dyn Error + Sync + Send>;

impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let text = if *ty == Type::BOOL {
            if bool::from_sql(ty, raw)? { "1" } else { "0" }.to_string()
        } else if *ty == Type::INT2 {
            i16::from_sql(ty, raw)?.to_string()
        } else if *ty == Type::INT4 {
            i32::from_sql(ty, raw)?.to_string()
        } else if *ty == Type::INT8 {
            i64::from_sql(ty, raw)?.to_string()
        } else if *ty == Type::OID {
            u32::from_sql(ty, raw)?.to_string()
        } else if *ty == Type::FLOAT4 {
            f32::from_sql(ty, raw)?.to_string()
        } else if *ty == Type::FLOAT8 {
            f64::from_sql(ty, raw)?.to_string()
        } else if *ty == Type::NUMERIC {
            numeric_text(raw)?
        } else if *ty == Type::DATE {
            NaiveDate::from_sql(ty, raw)?.format("%Y-%m-%d").to_string()
        } else if *ty == Type::TIMESTAMPTZ {
            DateTime::<Utc>::from_sql(ty, raw)?
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        } else if *ty == Type::TIMESTAMP {
            NaiveDateTime::from_sql(ty, raw)?
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        } else if *ty == Type::BYTEA {
            format!("{:?}", <Vec<u8>>::from_sql(ty, raw)?)
        } else if <String as FromSql>::accepts(ty) {
            String::from_sql(ty, raw)?
        } else {
            return Err(format!("the test harness cannot read a {ty} value").into());
        };
        Ok(Cell(text))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Cell("NULL".into()))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// NUMERIC's binary form (ndigits, weight, sign, dscale, then base-10000 digits) as
/// decimal text; no fraction, or a fraction of zeros, gives an integer.
pub fn numeric_text(raw: &[u8]) -> Result<String, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        raw.get(i..i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a short numeric value".into())
    };
    let ndigits = word(0)? as usize;
    let weight = i32::from(word(2)? as i16);
    let sign = word(4)?;
    let dscale = word(6)? as usize;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        other => return Err(format!("a numeric with sign {other:#x}").into()),
    }
    let digits = (0..ndigits)
        .map(|i| word(8 + 2 * i))
        .collect::<Result<Vec<u16>, _>>()?;
    let digit = |j: i32| -> u16 {
        if j >= 0 {
            digits.get(j as usize).copied().unwrap_or(0)
        } else {
            0
        }
    };
    let mut int = String::new();
    for j in 0..=weight {
        if int.is_empty() {
            if digit(j) != 0 {
                int = digit(j).to_string();
            }
        } else {
            int.push_str(&format!("{:04}", digit(j)));
        }
    }
    if int.is_empty() {
        int.push('0');
    }
    let mut frac = String::new();
    let mut j = weight + 1;
    while frac.len() < dscale {
        frac.push_str(&format!("{:04}", digit(j)));
        j += 1;
    }
    frac.truncate(dscale);
    let frac = frac.trim_end_matches('0');
    let negative = sign == 0x4000 && (int != "0" || !frac.is_empty());
    Ok(format!(
        "{}{int}{}{frac}",
        if negative { "-" } else { "" },
        if frac.is_empty() { "" } else { "." }
    ))
}
