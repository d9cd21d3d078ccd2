//! A pooler that hands the server connection to other clients between transactions
//! (PgBouncer's `pool_mode = transaction` or `statement`) breaks the rule sqlrun's
//! reservations stand on: a run is alive while its session holds a session-level
//! advisory lock. Behind such a pooler the lock stays on a server connection other clients
//! then use, and a run's own next transaction may land on another one. So sqlrun looks
//! once per process and URL, before anything is written, and refuses.
//!
//! The probe: this session sets a marker for the session (a token the server makes), then
//! (1) its next transaction must see the same backend and its own marker, and (2) a second,
//! short connection through the same URL must see neither this session's backend nor its
//! marker. A transaction pooler that is busy fails (1); an idle one hands its just-released
//! server back, to this session (passing (1)) and then to the second connection (failing
//! (2): PgBouncer reuses servers last in, first out); with `server_round_robin` the next
//! transaction of this session gets another server and fails (1). A direct connection or a
//! session pool passes both: a session keeps its server, and PgBouncer's DISCARD ALL
//! clears a server before another client gets it. Cost, once per process: one more
//! connection, opened beside the first one so that their starts overlap (when the first
//! finds no slot, the probe's gives way, and another is opened once the first has its
//! slot, as the probe was before: a role allowed one connection keeps it for the run, and
//! the probe's refused connection is no evidence), and three one-row queries.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_postgres::error::SqlState;
use tokio_postgres::SimpleQueryMessage;

use super::session::Session;
use super::{DbError, Error, Result};

const IDLE_SESSION_OFF: &str = include_str!("../../../queries/postgres/idle_session_off.sql");

/// The URLs probed in this process: a run's other connections (`--jobs`) go through the
/// same pooler, or none.
static PROBED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// How long a connection refused for want of slots is tried again: a probe's connection
/// (this process's, or another runner's that started at the same moment) holds a slot for
/// a moment only.
const SLOT_FREED_WITHIN: Duration = Duration::from_secs(2);

/// How long the second connection may take: a full session pool makes it wait for a
/// server that this session holds (no answer is not evidence of transaction pooling).
const SECOND_BOUND: Duration = Duration::from_secs(2);

/// One session as the probe sees it: its backend and its marker.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    backend: String,
    marker: Option<String>,
}

/// A probe under way: the second connection, opened in a thread beside the first one (so
/// its cost overlaps), waits for the word to look.
pub(super) struct Probe {
    url: String,
    second: Option<Second>,
    /// How the second connection is opened: again, after the first one has its slot,
    /// when the one opened beside it gave way.
    connect: Option<Connect>,
    /// Whether the first session turns the server's idle_session_timeout off before it
    /// waits for the second (not when the URL's options set it).
    pin_idle: bool,
}

struct Second {
    word: mpsc::Sender<Word>,
    seen: mpsc::Receiver<Option<Seen>>,
}

/// What the second connection is told.
enum Word {
    /// The first session is idle now: look.
    Look,
    /// The first connection wants the slot this one holds: end at once.
    GiveWay,
}

type Connect = Arc<dyn Fn() -> std::result::Result<Session, tokio_postgres::Error> + Send + Sync>;

impl Probe {
    /// Starts the second connection (`connect` opens one the way the first is opened),
    /// unless this process has probed `url` already.
    pub(super) fn start(url: &str, connect: Connect, pin_idle: bool) -> Probe {
        let probed = PROBED.lock().unwrap_or_else(|e| e.into_inner());
        let due = !probed.iter().any(|u| u == url);
        Probe {
            url: url.to_string(),
            second: due.then(|| second_connection(Arc::clone(&connect))),
            connect: due.then_some(connect),
            pin_idle,
        }
    }

    /// Refuses (exit 2) when `client` goes through a transaction- or statement-mode
    /// pooler.
    pub(super) fn finish(self, client: &mut Session, label: &str) -> Result<()> {
        // The one opened beside this session gave way: another, now that this one has its
        // slot (refused, it is no evidence either way).
        let second = match (self.second, self.connect) {
            (Some(second), _) => second,
            (None, Some(connect)) => second_connection(connect),
            (None, None) => return Ok(()),
        };
        if self.pin_idle {
            client.simple_query(IDLE_SESSION_OFF)?;
        }
        let marked = seen(
            client,
            include_str!("../../../queries/postgres/pooler_mark.sql"),
        )?;
        let again = seen(
            client,
            include_str!("../../../queries/postgres/pooler_look.sql"),
        )?;
        // Only now, with this session idle, may the second one look.
        let other = match second.word.send(Word::Look) {
            Ok(()) => second.seen.recv_timeout(SECOND_BOUND).ok().flatten(),
            Err(_) => None,
        };
        if let Some(evidence) = pooled(&marked, &again, other.as_ref()) {
            return Err(refusal(label, &evidence));
        }
        PROBED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.url);
        Ok(())
    }

    /// The second connection ends now, and gives back its slot; `finish` opens another
    /// once the first connection has its own. Whether it gave way.
    fn give_way(&mut self) -> bool {
        let Some(second) = self.second.take() else {
            return false;
        };
        let _ = second.word.send(Word::GiveWay);
        let _ = second.seen.recv_timeout(SECOND_BOUND);
        true
    }
}

/// Connects, and when the server says it has no slot left, has the probe's connection
/// give way and tries again for a moment (another runner's probe may be holding one: a
/// run's workers connect right after its probe, and two runners that start together each
/// probe): the probe must not make a role that fits N connections need N + 1.
pub(super) fn after_probe<T>(
    probe: &mut Probe,
    mut connect: impl FnMut() -> std::result::Result<T, tokio_postgres::Error>,
) -> std::result::Result<T, tokio_postgres::Error> {
    let mut asked = Instant::now();
    loop {
        match connect() {
            Err(e)
                if e.code() == Some(&SqlState::TOO_MANY_CONNECTIONS)
                    && asked.elapsed() < SLOT_FREED_WITHIN =>
            {
                if probe.give_way() {
                    // The wait for the probe's end is not the slot's.
                    asked = Instant::now();
                } else {
                    std::thread::sleep(Duration::from_millis(20))
                }
            }
            done => return done,
        }
    }
}

/// The second connection, in a thread: it connects at once, looks when told to, and says
/// what it saw (None if it could not connect or look, or gave way: no evidence either
/// way).
fn second_connection(connect: Connect) -> Second {
    let (word, told) = mpsc::channel();
    let (tell, seen_rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Not exempt from idle_session_timeout: a statement of its own would take a pooled
        // server out of turn and blind the probe, and its wait lasts the first session's
        // three round trips; ended meanwhile, it is only no evidence (as on a direct
        // connection, which it then is).
        let mut client = connect().ok();
        let looked = match told.recv() {
            Ok(Word::Look) => client.as_mut().and_then(|c| {
                seen(c, include_str!("../../../queries/postgres/pooler_look.sql")).ok()
            }),
            Ok(Word::GiveWay) => {
                drop(client.take());
                None
            }
            Err(_) => return,
        };
        // Said before the session ends: its end waits for the server to let it go.
        let _ = tell.send(looked);
        drop(client);
    });
    Second {
        word,
        seen: seen_rx,
    }
}

/// The evidence of a pooler that shares server connections between transactions, if any.
fn pooled(marked: &Seen, again: &Seen, other: Option<&Seen>) -> Option<String> {
    if again.backend != marked.backend {
        return Some(format!(
            "two transactions of one connection ran on two server sessions (backend {} then {})",
            marked.backend, again.backend
        ));
    }
    if again.marker != marked.marker {
        return Some(
            "a setting made for the session was gone in the session's next transaction".into(),
        );
    }
    let other = other?;
    if other.backend == marked.backend || (other.marker.is_some() && other.marker == marked.marker)
    {
        return Some(format!(
            "a second connection was given the first one's server session (backend {}) while \
             the first was still open",
            other.backend
        ));
    }
    None
}

fn refusal(label: &str, evidence: &str) -> Error {
    Error::Open {
        target: label.to_string(),
        message: format!(
            "a connection pooler in transaction or statement mode stands between sqlrun and \
             the server ({evidence})"
        ),
        fix: "sqlrun's runs hold session-level advisory locks for their life, and those do not \
              survive transaction pooling (the server session goes to other clients between \
              transactions), so reservations would not mean anything; connect to the server \
              directly, or through a session-mode pool (PgBouncer: pool_mode = session for \
              this database)"
            .into(),
    }
}

/// The one row of a probe query, by the simple query protocol: one message, one
/// transaction, also through a pooler (a prepared statement would span two).
fn seen(client: &mut Session, sql: &str) -> Result<Seen> {
    let messages = client.simple_query(sql)?;
    let row = messages.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => Some(row),
        _ => None,
    });
    let Some(row) = row else {
        return Err(DbError::other(format!("the pooler probe got no row from: {sql}")).into());
    };
    let text = |i: usize| row.get(i).filter(|v| !v.is_empty()).map(str::to_string);
    Ok(Seen {
        backend: text(0).unwrap_or_default(),
        marker: text(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(backend: &str, marker: Option<&str>) -> Seen {
        Seen {
            backend: backend.into(),
            marker: marker.map(str::to_string),
        }
    }

    #[test]
    fn a_direct_session_passes() {
        let mine = at("10", Some("m"));
        assert_eq!(pooled(&mine, &mine, Some(&at("11", None))), None);
        assert_eq!(pooled(&mine, &mine, None), None);
    }

    #[test]
    fn another_backend_or_a_lost_marker_is_pooling() {
        let mine = at("10", Some("m"));
        assert!(pooled(&mine, &at("11", None), None).is_some());
        assert!(pooled(&mine, &at("10", None), None).is_some());
    }

    #[test]
    fn a_second_client_on_the_first_ones_server_is_pooling() {
        let mine = at("10", Some("m"));
        assert!(pooled(&mine, &mine, Some(&at("10", Some("m")))).is_some());
        assert!(pooled(&mine, &mine, Some(&at("12", Some("m")))).is_some());
    }
}
