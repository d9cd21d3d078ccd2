//! TLS to PostgreSQL (sslmode, sslrootcert, PGSSLMODE...): a server of each test on
//! 127.0.0.1 (a free port), with ssl on and a CA and a server certificate for `localhost`
//! made here (rcgen), or without ssl. Which sessions were encrypted is read from the
//! server's log (log_connections says "SSL enabled"); what was written, over its socket.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::procs::poll;
use crate::support::{cmd_with_url, die_with_parent, pg_bin_dir, pg_server_user, Run};

/// A CA, a server certificate it signed for `localhost` only, and a client certificate
/// for the user `postgres`.
struct Certs {
    ca_pem: String,
    server_pem: String,
    server_key_pem: String,
    client_pem: String,
    client_key_pem: String,
}

/// How the server takes TCP connections.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Auth {
    /// No TLS (ssl off), trust.
    Plain,
    /// Only over TLS (hostssl), trust.
    Tls,
    /// Only over TLS with a client certificate its CA signed (hostssl ... cert).
    ClientCert,
}

/// A certificate signed by `issuer` whose subject (and DNS name) is `name`, and its key.
fn signed(name: &str, issuer: &Issuer<'_, KeyPair>) -> (String, String) {
    let key = KeyPair::generate().expect("a key");
    let mut params = CertificateParams::new(vec![name.to_string()]).expect("params");
    params.distinguished_name.push(DnType::CommonName, name);
    let pem = params
        .signed_by(&key, issuer)
        .expect("sign a certificate")
        .pem();
    (pem, key.serialize_pem())
}

fn make_ca(name: &str) -> (CertificateParams, KeyPair, String) {
    let key = KeyPair::generate().expect("a CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let pem = params.self_signed(&key).expect("self-sign the CA").pem();
    (params, key, pem)
}

fn certs() -> Certs {
    let (params, key, ca_pem) = make_ca("sqlrun test CA");
    let issuer = Issuer::new(params, key);
    let (server_pem, server_key_pem) = signed("localhost", &issuer);
    let (client_pem, client_key_pem) = signed("postgres", &issuer);
    Certs {
        ca_pem,
        server_pem,
        server_key_pem,
        client_pem,
        client_key_pem,
    }
}

/// Sets the data folder up for `auth`: the server's TLS files and pg_hba.conf. The settings
/// it needs besides.
fn configure(data: &Path, auth: Auth, made: &Certs, user: Option<(u32, u32)>) -> Vec<String> {
    if auth == Auth::Plain {
        return vec!["ssl=off".into()];
    }
    server_file(&data.join("server.crt"), &made.server_pem, user);
    server_file(&data.join("server.key"), &made.server_key_pem, user);
    server_file(&data.join("root.crt"), &made.ca_pem, user);
    let method = if auth == Auth::ClientCert {
        "cert"
    } else {
        "trust"
    };
    let hba = format!(
        "local all all trust\nhostssl all all 127.0.0.1/32 {method}\nhostssl all all ::1/128 {method}\n"
    );
    fs::write(data.join("pg_hba.conf"), hba).expect("write pg_hba.conf");
    vec!["ssl=on".into(), "ssl_ca_file=root.crt".into()]
}

/// A PostgreSQL server of one test on 127.0.0.1 (trust authentication), its socket in its
/// folder; stopped when dropped, and with the test's thread (parent-death signal).
struct TcpServer {
    dir: tempfile::TempDir,
    port: u16,
    postgres: Child,
    /// The CA that signed the server's certificate, and another one.
    ca: PathBuf,
    wrong_ca: PathBuf,
    /// A client certificate for `postgres` and its key.
    client: (PathBuf, PathBuf),
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

fn initdb(bin: &Path, data: &Path, user: Option<(u32, u32)>) {
    let mut cmd = Command::new(bin.join("initdb"));
    cmd.arg("-D")
        .arg(data)
        .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
        .args(["--no-locale", "--no-sync"]);
    as_server(&mut cmd, data.parent().expect("the server's folder"), user);
    let out = cmd.output().expect("run initdb");
    assert!(
        out.status.success(),
        "initdb of the TLS test server: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn as_server(cmd: &mut Command, dir: &Path, user: Option<(u32, u32)>) {
    if let Some((uid, gid)) = user {
        std::os::unix::process::CommandExt::uid(cmd, uid);
        std::os::unix::process::CommandExt::gid(cmd, gid);
    }
    cmd.current_dir(dir)
        .env_remove("PGDATA")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
}

/// A file the server reads: its key must be the server user's and 0600.
fn server_file(path: &Path, text: &str, user: Option<(u32, u32)>) {
    fs::write(path, text).expect("write a server TLS file");
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).expect("chmod 0600");
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown to postgres");
    }
}

impl TcpServer {
    fn start(auth: Auth) -> TcpServer {
        let (bin, user) = (pg_bin_dir(), pg_server_user());
        let dir = tempfile::Builder::new()
            .prefix("sqlrun-tls-pg-")
            .tempdir()
            .expect("a temp dir");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown");
        }
        let data = dir.path().join("data");
        initdb(&bin, &data, user);
        let (ca, wrong_ca) = (dir.path().join("ca.pem"), dir.path().join("other-ca.pem"));
        let made = certs();
        fs::write(&ca, &made.ca_pem).expect("write ca.pem");
        fs::write(&wrong_ca, make_ca("another CA").2).expect("write other-ca.pem");
        let client = (dir.path().join("client.crt"), dir.path().join("client.key"));
        fs::write(&client.0, &made.client_pem).expect("write client.crt");
        fs::write(&client.1, &made.client_key_pem).expect("write client.key");
        let settings = configure(&data, auth, &made, user);
        let port = free_port();
        let log = fs::File::create(dir.path().join("server.log")).expect("the server log");
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D").arg(&data).arg("-k").arg(dir.path());
        for setting in [
            "listen_addresses=127.0.0.1".to_string(),
            format!("port={port}"),
            "fsync=off".into(),
            "log_connections=on".into(),
            "TimeZone=UTC".into(),
        ]
        .into_iter()
        .chain(settings)
        {
            cmd.arg("-c").arg(setting);
        }
        as_server(&mut cmd, dir.path(), user);
        cmd.stdout(log.try_clone().expect("the log")).stderr(log);
        die_with_parent(&mut cmd, libc::SIGQUIT);
        let postgres = cmd.spawn().expect("start postgres");
        let server = TcpServer {
            dir,
            port,
            postgres,
            ca,
            wrong_ca,
            client,
        };
        let ready = poll(Duration::from_secs(60), || server.socket().is_ok());
        assert!(
            ready,
            "the TLS test server takes no connections:\n{}",
            server.log()
        );
        server
    }

    fn socket(&self) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host_path(self.dir.path())
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect(postgres::NoTls)
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// sqlrun's sessions so far: (encrypted, plain). A command opens one or more (the
    /// pooler probe's second session, a worker's).
    fn sessions(&self) -> (usize, usize) {
        let log = self.log();
        let ours: Vec<&str> = log
            .lines()
            .filter(|l| {
                l.contains("connection authorized") && l.contains("application_name=sqlrun")
            })
            .collect();
        let tls = ours.iter().filter(|l| l.contains("SSL enabled")).count();
        (tls, ours.len() - tls)
    }

    /// `sqlrun --db postgresql://postgres@HOST:PORT/postgres?QUERY --schema SCHEMA ARGS`, with
    /// `env` (PGSSL...) and a HOME without ~/.postgresql.
    fn sqlrun(
        &self,
        host: &str,
        query: &str,
        env: &[(&str, &str)],
        schema: &str,
        args: &[&str],
    ) -> Run {
        let url = format!(
            "postgresql://postgres@{host}:{}/postgres?{query}",
            self.port
        );
        let mut cmd = cmd_with_url(&url, schema, args);
        cmd.env("HOME", self.dir.path()).envs(env.iter().copied());
        Run::from(cmd.output().expect("run sqlrun"))
    }

    fn expect(
        &self,
        code: i32,
        host: &str,
        query: &str,
        env: &[(&str, &str)],
        schema: &str,
        args: &[&str],
    ) -> Run {
        let run = self.sqlrun(host, query, env, schema, args);
        assert_eq!(
            run.code, code,
            "sqlrun {args:?} on {host} with {query:?} {env:?}: exit {} (wanted {code})\n{}{}",
            run.code, run.stdout, run.stderr
        );
        run
    }

    fn schema_exists(&self, schema: &str) -> bool {
        let mut c = self.socket().expect("the socket");
        let row = c
            .query_one(
                "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
                &[&schema],
            )
            .expect("look up the schema");
        row.get::<_, i64>(0) == 1
    }

    fn dates(&self, schema: &str, table: &str) -> Vec<String> {
        let mut c = self.socket().expect("the socket");
        let sql = format!("SELECT ds::text FROM \"{schema}\".{table} ORDER BY ds");
        c.query(&sql, &[])
            .expect("read the table")
            .iter()
            .map(|r| r.get(0))
            .collect()
    }
}

impl Drop for TcpServer {
    fn drop(&mut self) {
        // SAFETY: a signal to the postmaster this test started, by its pid.
        unsafe { libc::kill(self.postgres.id() as libc::pid_t, libc::SIGQUIT) };
        let _ = self.postgres.wait();
    }
}

fn ca_query(mode: &str, ca: &Path) -> String {
    format!("sslmode={mode}&sslrootcert={}", ca.display())
}

#[test]
fn require_encrypts_and_a_run_lands_and_prefer_takes_tls_when_offered() {
    let server = TcpServer::start(Auth::Tls);
    let s = "tls_run";
    for args in [
        &["init"][..],
        &["generate", "--start", "2026-02-01", "--days", "3"],
        &["apply", "--interval", "2026-02-01..2026-02-02"],
    ] {
        server.expect(0, "127.0.0.1", "sslmode=require", &[], s, args);
    }
    assert_eq!(
        server.dates(s, "daily_revenue"),
        ["2026-02-01", "2026-02-02"]
    );
    assert_eq!(
        server.sessions().1,
        0,
        "a plain session under require:\n{}",
        server.log()
    );
    let (tls, _) = server.sessions();
    assert!(
        tls >= 3,
        "sqlrun's sessions were not encrypted:\n{}",
        server.log()
    );

    // prefer, written or the default for TCP, and PGSSLMODE: TLS, since the server offers it.
    server.expect(0, "127.0.0.1", "sslmode=prefer", &[], s, &["status"]);
    server.expect(0, "127.0.0.1", "", &[], s, &["status"]);
    server.expect(
        0,
        "127.0.0.1",
        "",
        &[("PGSSLMODE", "require")],
        s,
        &["status"],
    );
    let (now, plain) = server.sessions();
    assert!(now >= tls + 3 && plain == 0, "{}", server.log());

    // This server takes TCP only over TLS: without it, the hint says to ask for TLS.
    let run = server.expect(2, "127.0.0.1", "sslmode=disable", &[], s, &["status"]);
    assert!(
        run.stderr.contains("no encryption") && run.stderr.contains("sslmode=require"),
        "{}",
        run.stderr
    );
}

#[test]
fn verify_full_checks_the_ca_and_the_host_name() {
    let server = TcpServer::start(Auth::Tls);
    let right = ca_query("verify-full", &server.ca);
    server.expect(0, "localhost", &right, &[], "tls_full", &["init"]);
    assert!(server.schema_exists("tls_full"));
    let env = [
        ("PGSSLMODE", "verify-full"),
        ("PGSSLROOTCERT", server.ca.to_str().expect("a UTF-8 path")),
    ];
    server.expect(0, "localhost", "", &env, "tls_env", &["init"]);
    assert!(server.schema_exists("tls_env"));
    // verify-ca checks the chain alone: the certificate is for localhost, not 127.0.0.1.
    server.expect(
        0,
        "127.0.0.1",
        &ca_query("verify-ca", &server.ca),
        &[],
        "tls_ca",
        &["init"],
    );
    assert!(server.schema_exists("tls_ca"));

    let wrong = server.wrong_ca.display().to_string();
    for mode in ["verify-full", "verify-ca", "require"] {
        let query = ca_query(mode, &server.wrong_ca);
        let run = server.expect(2, "localhost", &query, &[], "tls_wrong", &["init"]);
        for part in ["not trusted", wrong.as_str(), "sslrootcert"] {
            assert!(
                run.stderr.contains(part),
                "{mode}: {part:?} missing: {}",
                run.stderr
            );
        }
    }
    let run = server.expect(2, "127.0.0.1", &right, &[], "tls_wrong", &["init"]);
    assert!(
        run.stderr
            .contains("certificate is for localhost, not 127.0.0.1:")
            && run.stderr.contains("verify-ca"),
        "{}",
        run.stderr
    );
    let query = ca_query("verify-full", Path::new("/nonexistent/ca.pem"));
    let run = server.expect(2, "localhost", &query, &[], "tls_wrong", &["init"]);
    assert!(run.stderr.contains("/nonexistent/ca.pem"), "{}", run.stderr);
    let run = server.expect(
        2,
        "localhost",
        "sslmode=verify-full",
        &[],
        "tls_wrong",
        &["init"],
    );
    assert!(run.stderr.contains("sslrootcert="), "{}", run.stderr);
    let run = server.expect(2, "localhost", "sslmode=bogus", &[], "tls_wrong", &["init"]);
    assert!(run.stderr.contains("verify-full"), "{}", run.stderr);
    assert!(
        !server.schema_exists("tls_wrong"),
        "a refused connection wrote"
    );
}

#[test]
fn a_server_without_tls_is_refused_under_require_and_taken_plain_under_prefer() {
    let server = TcpServer::start(Auth::Plain);
    for env in [&[][..], &[("PGSSLMODE", "require")]] {
        let query = if env.is_empty() {
            "sslmode=require"
        } else {
            ""
        };
        let run = server.expect(2, "127.0.0.1", query, env, "tls_none", &["init"]);
        assert!(
            run.stderr.contains("does not offer TLS") && run.stderr.contains("sslmode=prefer"),
            "{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("check that the server is up"),
            "{}",
            run.stderr
        );
    }
    assert!(
        !server.schema_exists("tls_none"),
        "a refused connection wrote"
    );
    server.expect(
        0,
        "127.0.0.1",
        "sslmode=prefer",
        &[],
        "tls_plain",
        &["init"],
    );
    server.expect(0, "127.0.0.1", "", &[], "tls_plain", &["status"]);
    assert!(server.schema_exists("tls_plain"));
    let (tls, plain) = server.sessions();
    assert!(tls == 0 && plain >= 2, "{}", server.log());
}

#[test]
fn a_client_certificate_is_sent_when_given() {
    let server = TcpServer::start(Auth::ClientCert);
    let run = server.expect(
        2,
        "localhost",
        "sslmode=require",
        &[],
        "tls_cert",
        &["init"],
    );
    assert!(
        run.stderr.contains("certificate") && run.stderr.contains("sslcert="),
        "{}",
        run.stderr
    );
    assert!(
        !server.schema_exists("tls_cert"),
        "a refused connection wrote"
    );
    let (cert, key) = (server.client.0.display(), server.client.1.display());
    let query = format!(
        "{}&sslcert={cert}&sslkey={key}",
        ca_query("verify-full", &server.ca)
    );
    server.expect(0, "localhost", &query, &[], "tls_cert", &["init"]);
    let env = [
        ("PGSSLCERT", server.client.0.to_str().expect("UTF-8")),
        ("PGSSLKEY", server.client.1.to_str().expect("UTF-8")),
    ];
    server.expect(
        0,
        "localhost",
        "sslmode=require",
        &env,
        "tls_cert",
        &["status"],
    );
    assert!(server.schema_exists("tls_cert"));
    let (tls, plain) = server.sessions();
    assert!(tls >= 2 && plain == 0, "{}", server.log());
}
