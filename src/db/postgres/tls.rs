//! TLS to PostgreSQL with libpq's settings: `sslmode`, `sslrootcert`, `sslcert` and `sslkey`
//! from the URL, else from PGSSLMODE, PGSSLROOTCERT, PGSSLCERT and PGSSLKEY. tokio-postgres
//! parses only three sslmodes and no file, so these leave the URL here and the connector is
//! built from them: rustls with the ring provider (no system library to build against).
//! A connection that fails for a TLS reason is said with that reason and its fix.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_postgres::config::{Host, SslMode as DriverMode};
use tokio_postgres::{CancelToken, Config, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::explain::{connect_error, with_causes};
use super::session::{runtime, Session};
use super::{redact, Error, Result};

const MODES: &str = "disable, prefer, require, verify-ca, verify-full";
/// The URL's parameters (libpq's spelling) that are read here, not by tokio-postgres.
const KEYS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// libpq's sslmode. Over a Unix socket none applies (PostgreSQL has no TLS there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SslMode {
    Disable,
    /// TLS when the server offers it, else plain; a failed handshake is retried plain.
    Prefer,
    /// Encrypted; the certificate is checked only against a root cert file there is.
    Require,
    /// Encrypted, and the certificate chain leads to the root cert.
    VerifyCa,
    /// As verify-ca, and the certificate is for the host connected to.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str, from: &str) -> Result<SslMode> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            // libpq's `allow` (plain first, TLS if refused) has no counterpart in the driver.
            _ => {
                return Err(Error::BadInput(format!(
                    "{from}: sslmode {value:?} is not one sqlrun knows; write one of {MODES}"
                )))
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the trusted CA certificates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Roots {
    None,
    /// A PEM file: given (sslrootcert), or libpq's default ~/.postgresql/root.crt.
    File(PathBuf),
    /// `sslrootcert=system`: the system's trusted CAs.
    System,
}

/// The TLS settings of one URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Tls {
    mode: SslMode,
    roots: Roots,
    /// The client certificate and its key (PEM files), if there are.
    client: Option<(PathBuf, PathBuf)>,
}

/// Opens sessions as the settings say (a second session too: the pooler probe's).
#[derive(Clone)]
pub(super) struct Connector {
    tls: Option<MakeRustlsConnect>,
    prefer: bool,
}

impl Connector {
    /// A session, and how to cancel its statements. Under prefer, a failed TLS handshake is
    /// followed by a plain connection, as libpq does.
    pub(super) fn connect(
        &self,
        config: &Config,
    ) -> std::result::Result<(Session, Canceller), tokio_postgres::Error> {
        let plain = || {
            let mut config = config.clone();
            config.ssl_mode(DriverMode::Disable);
            Session::connect(&config, NoTls).map(|c| (c, Canceller(None)))
        };
        let Some(tls) = &self.tls else {
            return plain();
        };
        match Session::connect(config, tls.clone()) {
            Ok(client) => Ok((client, Canceller(Some(tls.clone())))),
            Err(e) if self.prefer && tls_failure(&e).is_some() => plain(),
            Err(e) => Err(e),
        }
    }
}

/// Sends a cancel request the way the session was made (over TLS if it is).
#[derive(Clone)]
pub(super) struct Canceller(Option<MakeRustlsConnect>);

impl Canceller {
    pub(super) fn cancel(&self, token: &CancelToken) {
        // A cancel that does not arrive only lets the statement run to its bound.
        let _ = match &self.0 {
            Some(tls) => runtime().block_on(token.cancel_query(tls.clone())),
            None => runtime().block_on(token.cancel_query(NoTls)),
        };
    }
}

/// How a server certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// Not at all (encryption against a passive listener only).
    Nothing,
    /// Its chain leads to a trusted CA.
    Chain,
    /// And it is for the host name connected to.
    ChainAndName,
}

/// A URL parameter's value, percent-decoded.
fn decoded(value: &str) -> String {
    percent_encoding::percent_decode_str(value)
        .decode_utf8_lossy()
        .into_owned()
}

/// Takes libpq's TLS parameters out of `url`: the URL left for tokio-postgres, and their
/// values by key.
fn take_params(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let (mut kept, mut taken) = (Vec::new(), Vec::new());
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decoded(key);
        if KEYS.contains(&key.as_str()) {
            taken.push((key, decoded(value)));
        } else {
            kept.push(pair);
        }
    }
    let rest = match kept.is_empty() {
        true => base.to_string(),
        false => format!("{base}?{}", kept.join("&")),
    };
    (rest, taken)
}

impl Tls {
    /// The TLS settings of `url` (its parameters, else the environment's PGSSL* variables),
    /// and the URL without them.
    pub(super) fn from_url(url: &str) -> Result<(String, Tls)> {
        let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Tls::from_url_with(url, env, home.as_deref())
    }

    fn from_url_with(
        url: &str,
        env: impl Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<(String, Tls)> {
        let (rest, params) = take_params(url);
        let value = |key: &str| -> Option<(String, String)> {
            let given = params.iter().rev().find(|(k, _)| k == key);
            match given {
                Some((_, v)) => Some((v.clone(), format!("--db {}", redact(url)))),
                None => env(&format!("PG{}", key.to_uppercase()))
                    .map(|v| (v, format!("PG{}", key.to_uppercase()))),
            }
        };
        let default_file = |name: &str| home.map(|h| h.join(".postgresql").join(name));
        let roots = match value("sslrootcert") {
            Some((v, _)) if v == "system" => Roots::System,
            Some((v, _)) => Roots::File(PathBuf::from(v)),
            None => match default_file("root.crt").filter(|p| p.exists()) {
                Some(path) => Roots::File(path),
                None => Roots::None,
            },
        };
        let mode = match value("sslmode") {
            Some((v, from)) => SslMode::parse(&v, &from)?,
            // As libpq: the system's CAs sign certificates for any name, so only verify-full means anything with them.
            None if roots == Roots::System => SslMode::VerifyFull,
            None => SslMode::Prefer,
        };
        if roots == Roots::System && mode != SslMode::VerifyFull && mode != SslMode::Disable {
            return Err(Error::BadInput(format!(
                "--db {}: sslrootcert=system trusts every public CA, which signs certificates \
                 for any name, so it needs sslmode=verify-full (not {}); write \
                 sslmode=verify-full, or give sslrootcert the file of your server's CA",
                redact(url),
                mode.name()
            )));
        }
        let file = |key: &str, default: &str| match value(key) {
            Some((v, _)) => Some(PathBuf::from(v)),
            None => default_file(default).filter(|p| p.exists()),
        };
        let (cert, key) = (
            file("sslcert", "postgresql.crt"),
            file("sslkey", "postgresql.key"),
        );
        if cert.is_some() != key.is_some()
            && (value("sslcert").is_some() || value("sslkey").is_some())
        {
            return Err(Error::BadInput(format!(
                "--db {}: a client certificate needs both sslcert and sslkey (one was given, \
                 and the other's default file does not exist); give both, as \
                 sslcert=/path/client.crt&sslkey=/path/client.key (or PGSSLCERT and PGSSLKEY)",
                redact(url)
            )));
        }
        let client = cert.zip(key);
        Ok((
            rest,
            Tls {
                mode,
                roots,
                client,
            },
        ))
    }

    fn check(&self) -> Check {
        match (self.mode, &self.roots) {
            (SslMode::VerifyFull, _) => Check::ChainAndName,
            (SslMode::VerifyCa, _) => Check::Chain,
            // As libpq: a root cert file there is is used by every mode that encrypts.
            (_, Roots::File(_)) => Check::Chain,
            _ => Check::Nothing,
        }
    }

    /// What tokio-postgres is told; nothing over Unix sockets, as libpq.
    fn driver_mode(&self, config: &Config) -> DriverMode {
        let only_sockets = config
            .get_hosts()
            .iter()
            .all(|h| !matches!(h, Host::Tcp(_)));
        match self.mode {
            _ if only_sockets => DriverMode::Disable,
            SslMode::Disable => DriverMode::Disable,
            SslMode::Prefer => DriverMode::Prefer,
            _ => DriverMode::Require,
        }
    }

    /// How to connect with these settings: sets the driver's sslmode in `config` and reads
    /// the TLS files (a file that cannot be read is said here, before connecting).
    pub(super) fn connector(&self, config: &mut Config, label: &str) -> Result<Connector> {
        let mode = self.driver_mode(config);
        config.ssl_mode(mode);
        let tls = match mode {
            DriverMode::Disable => None,
            _ => Some(MakeRustlsConnect::new(self.client_config(label)?)),
        };
        Ok(Connector {
            tls,
            prefer: mode == DriverMode::Prefer,
        })
    }

    fn client_config(&self, label: &str) -> Result<ClientConfig> {
        let provider = Arc::new(ring::default_provider());
        let verifier = Arc::new(Verifier {
            inner: self.webpki(&provider, label)?,
            check: self.check(),
            provider: provider.clone(),
        });
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| self.open_error(label, format!("TLS setup: {e}"), "report this"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        match &self.client {
            None => Ok(builder.with_no_client_auth()),
            Some((cert, key)) => {
                let chain =
                    read_pem_certs(cert).map_err(|why| self.file_error(label, cert, why))?;
                let key_der = PrivateKeyDer::from_pem_file(key)
                    .map_err(|e| self.file_error(label, key, e.to_string()))?;
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(|e| self.file_error(label, key, e.to_string()))
            }
        }
    }

    /// The chain checker, when certificates are checked at all.
    fn webpki(
        &self,
        provider: &Arc<CryptoProvider>,
        label: &str,
    ) -> Result<Option<Arc<WebPkiServerVerifier>>> {
        if self.check() == Check::Nothing {
            return Ok(None);
        }
        let mut store = RootCertStore::empty();
        match &self.roots {
            Roots::File(path) => {
                let certs =
                    read_pem_certs(path).map_err(|why| self.file_error(label, path, why))?;
                store.add_parsable_certificates(certs);
            }
            Roots::System => {
                store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
            Roots::None => {
                let fix = "give the server's CA certificate as sslrootcert=/path/to/ca.pem in \
                           the URL (or PGSSLROOTCERT), or put it at ~/.postgresql/root.crt";
                let message = format!(
                    "sslmode={} checks the server's certificate against a root certificate, and there is none",
                    self.mode.name()
                );
                return Err(self.open_error(label, message, fix));
            }
        }
        WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
            .build()
            .map(Some)
            .map_err(|e| {
                self.open_error(
                    label,
                    format!("{}: {e}", self.roots_name()),
                    "give sslrootcert a PEM file with the CA certificate that signed the server's",
                )
            })
    }

    fn roots_name(&self) -> String {
        match &self.roots {
            Roots::File(path) => format!("root certificate file {}", path.display()),
            Roots::System => "the system's trusted CAs".into(),
            Roots::None => "no root certificate".into(),
        }
    }

    /// That no trusted CA signed the server's certificate, by where they come from.
    fn unsigned(&self) -> String {
        match &self.roots {
            Roots::System => "none of the system's trusted CAs signed it".into(),
            _ => format!("no CA in {} signed it", self.roots_name()),
        }
    }

    fn open_error(&self, label: &str, message: String, fix: &str) -> Error {
        Error::Open {
            target: label.to_string(),
            message,
            fix: fix.into(),
        }
    }

    fn file_error(&self, label: &str, path: &Path, why: String) -> Error {
        self.open_error(
            label,
            format!("cannot read TLS file {}: {why}", path.display()),
            "fix the path in the URL's sslrootcert/sslcert/sslkey (or PGSSLROOTCERT, PGSSLCERT, \
             PGSSLKEY), or make the file readable; it must hold PEM certificates (a key for sslkey)",
        )
    }

    /// A failed connection, by its TLS cause if it has one, else as any other.
    pub(super) fn explain(&self, e: &tokio_postgres::Error, config: &Config, label: &str) -> Error {
        let host = host_name(config);
        let (message, fix) = match tls_failure(e) {
            Some(rustls::Error::InvalidCertificate(cause)) => self.bad_certificate(cause, &host),
            Some(other) => (
                format!("TLS with {host} failed: {other}"),
                "check that the server's TLS setup (ssl, its certificate) is sound; \
                 sslmode=disable connects without TLS on a network you trust"
                    .to_string(),
            ),
            None if with_causes(e).contains("server does not support TLS") => (
                format!(
                    "the server at {host} does not offer TLS (its ssl setting is off), and \
                     sslmode={} asks for it",
                    self.mode.name()
                ),
                "turn ssl on in the server's configuration (with a certificate), or connect \
                 with sslmode=prefer or sslmode=disable on a network you trust"
                    .into(),
            ),
            None if server_says(e, "client certificate") => (
                server_message(e),
                "the server wants a client certificate: give it and its key as \
                 sslcert=/path/client.crt&sslkey=/path/client.key in the URL (or PGSSLCERT and \
                 PGSSLKEY)"
                    .into(),
            ),
            None if server_says(e, "no encryption") => (
                server_message(e),
                "the server takes only TLS connections here (hostssl in pg_hba.conf): add \
                 sslmode=require, or better sslmode=verify-full&sslrootcert=/path/to/ca.pem, to \
                 the URL"
                    .into(),
            ),
            None => return connect_error(e, label),
        };
        self.open_error(label, message, &fix)
    }

    fn bad_certificate(&self, cause: &CertificateError, host: &str) -> (String, String) {
        match cause {
            CertificateError::NotValidForNameContext { presented, .. } => (
                format!(
                    "the server's certificate is for {}, not {host}",
                    presented.iter().map(|n| shown_name(n)).collect::<Vec<_>>().join(", ")
                ),
                name_fix(),
            ),
            CertificateError::NotValidForName => (
                format!("the server's certificate is not for {host}"),
                name_fix(),
            ),
            CertificateError::UnknownIssuer | CertificateError::BadSignature => (
                format!("the server's certificate is not trusted: {}", self.unsigned()),
                "point sslrootcert at the CA certificate that signed the server's (managed \
                 servers publish theirs; for a company server ask its admins), or fix the path"
                    .into(),
            ),
            other => (
                format!(
                    "the server's certificate was refused ({other:?}), checked against {}",
                    self.roots_name()
                ),
                "renew or fix the server's certificate, or point sslrootcert at the CA that signed it"
                    .into(),
            ),
        }
    }
}

/// A name as rustls presents it (`DnsName("db.example.com")`), as a person writes it.
fn shown_name(presented: &str) -> &str {
    presented
        .split_once("(\"")
        .and_then(|(_, rest)| rest.strip_suffix("\")"))
        .unwrap_or(presented)
}

fn name_fix() -> String {
    "connect by a name the certificate carries (the URL's host), or use sslmode=verify-ca to \
     check only that a trusted CA signed it"
        .into()
}

/// Whether the server's error message says `words`.
fn server_says(e: &tokio_postgres::Error, words: &str) -> bool {
    e.as_db_error().is_some_and(|d| d.message().contains(words))
}

fn server_message(e: &tokio_postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default()
}

/// The first host and port, for messages.
fn host_name(config: &Config) -> String {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    match config.get_hosts().first() {
        Some(Host::Tcp(name)) => format!("{name}:{port}"),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => format!("localhost:{port}"),
    }
}

/// The rustls error under a connection failure (tokio-rustls wraps it in an io::Error,
/// whose `source` skips it).
fn tls_failure(e: &tokio_postgres::Error) -> Option<&rustls::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(r) = c.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        if let Some(r) = c
            .downcast_ref::<io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(r);
        }
        cause = c.source();
    }
    None
}

fn read_pem_certs(path: &Path) -> std::result::Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| match e {
            rustls::pki_types::pem::Error::Io(io) => io.to_string(),
            other => format!("not a PEM certificate file ({other:?})"),
        })?;
    match certs.is_empty() {
        true => Err("it holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into()),
        false => Ok(certs),
    }
}

/// Checks a server certificate as `check` says; the handshake's signatures always.
#[derive(Debug)]
struct Verifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    check: Check,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(inner) = &self.inner else {
            return Ok(ServerCertVerified::assertion());
        };
        // webpki checks the chain before the name: a name error means the chain held.
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str, env: &[(&str, &str)]) -> Result<(String, Tls)> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Tls::from_url_with(
            url,
            |key| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()),
            Some(Path::new("/nonexistent-home")),
        )
    }

    fn bad_input(result: Result<(String, Tls)>) -> String {
        match result {
            Err(Error::BadInput(text)) => text,
            other => panic!("wanted bad input, got {other:?}"),
        }
    }

    #[test]
    fn tls_parameters_leave_the_url_and_the_rest_stays() {
        let (rest, tls) = parse(
            "postgresql://u:p@db.example.com:5432/app?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca%20bundle.pem",
            &[],
        )
        .unwrap();
        assert_eq!(
            rest,
            "postgresql://u:p@db.example.com:5432/app?application_name=x"
        );
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.roots, Roots::File(PathBuf::from("/etc/ca bundle.pem")));
        assert_eq!(tls.check(), Check::ChainAndName);
        let (rest, _) = parse("postgresql://h/db?sslmode=require", &[]).unwrap();
        assert_eq!(rest, "postgresql://h/db");
    }

    #[test]
    fn the_default_is_prefer_and_the_environment_fills_in_what_the_url_leaves_out() {
        let (_, tls) = parse("postgresql://h/db", &[]).unwrap();
        assert_eq!((tls.mode, tls.check()), (SslMode::Prefer, Check::Nothing));
        let env = [("PGSSLMODE", "verify-ca"), ("PGSSLROOTCERT", "/ca.pem")];
        let (_, tls) = parse("postgresql://h/db", &env).unwrap();
        assert_eq!((tls.mode, tls.check()), (SslMode::VerifyCa, Check::Chain));
        let (_, tls) = parse("postgresql://h/db?sslmode=disable", &env).unwrap();
        assert_eq!(tls.mode, SslMode::Disable);
    }

    #[test]
    fn require_with_a_root_cert_checks_the_chain_as_libpq_does() {
        let (_, tls) = parse("postgresql://h/db?sslmode=require&sslrootcert=/ca.pem", &[]).unwrap();
        assert_eq!(tls.check(), Check::Chain);
        let (_, tls) = parse("postgresql://h/db?sslmode=require", &[]).unwrap();
        assert_eq!(tls.check(), Check::Nothing);
    }

    #[test]
    fn system_roots_mean_verify_full() {
        let (_, tls) = parse("postgresql://h/db?sslrootcert=system", &[]).unwrap();
        assert_eq!((tls.mode, tls.roots), (SslMode::VerifyFull, Roots::System));
        let err = bad_input(parse(
            "postgresql://h/db?sslrootcert=system&sslmode=require",
            &[],
        ));
        assert!(
            err.contains("needs sslmode=verify-full (not require)"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_sslmode_is_bad_input_naming_the_accepted_ones() {
        let text = bad_input(parse("postgresql://u:secret@h/db?sslmode=bogus", &[]));
        assert!(text.contains("\"bogus\"") && text.contains(MODES), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let text = bad_input(parse("postgresql://h/db", &[("PGSSLMODE", "allow")]));
        assert!(text.starts_with("PGSSLMODE: "), "{text}");
    }

    #[test]
    fn names_are_shown_as_written() {
        assert_eq!(shown_name("DnsName(\"localhost\")"), "localhost");
        assert_eq!(shown_name("10.0.0.1"), "10.0.0.1");
    }

    #[test]
    fn client_certificates_need_both_files() {
        let (_, tls) = parse("postgresql://h/db?sslcert=/c.pem&sslkey=/k.pem", &[]).unwrap();
        assert_eq!(
            tls.client,
            Some((PathBuf::from("/c.pem"), PathBuf::from("/k.pem")))
        );
        // As libpq: one without the other is refused, not silently no certificate.
        let err = bad_input(parse("postgresql://h/db?sslcert=/c.pem", &[]));
        assert!(err.contains("needs both sslcert and sslkey"), "{err}");
        let err = bad_input(parse("postgresql://h/db", &[("PGSSLKEY", "/c.key")]));
        assert!(err.contains("give both"), "{err}");
    }
}
