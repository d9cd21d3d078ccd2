//! One session with the server, driven from this thread: tokio-postgres's client and its
//! connection on a runtime of the session's own (current thread), as the `postgres`
//! crate drives them, plus what that crate cannot do: pipelining. Statements sent
//! together go out before the first answer is read, so a date's statements cost one
//! round trip, not one each, and each is still a prepared statement with its values
//! bound (planned once per session, nothing ever printed into SQL).

use std::future::{self, Future};
use std::pin::{pin, Pin};
use std::task::Poll;

use bytes::Bytes;
use futures_util::{SinkExt, Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::runtime::Runtime;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{
    AsyncMessage, CancelToken, Client, Config, Error, Row, RowStream, SimpleQueryMessage, Socket,
    Statement,
};

type Messages = Pin<Box<dyn Stream<Item = Result<AsyncMessage, Error>> + Send>>;

/// The connection's half: it reads and writes the socket whenever this thread waits for
/// the client's half.
struct Driver {
    runtime: Runtime,
    connection: Messages,
    /// Why the server ended the session (`terminating connection due to ...`), when that
    /// went to the connection rather than to a statement: kept for the statements that
    /// then only saw "connection closed".
    reason: Option<Error>,
}

impl Driver {
    /// Runs `work` to its end, moving the connection's messages meanwhile (notices are
    /// dropped: sqlrun sends none it needs). When the connection breaks, it is dropped at
    /// once, so that every statement still waiting ends too; the error is the server's
    /// reason when there is one, whether it went to a statement or to the connection.
    fn block_on<T>(&mut self, work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        let mut work = pin!(work);
        let (connection, reason) = (&mut self.connection, &mut self.reason);
        self.runtime.block_on(future::poll_fn(|cx| {
            loop {
                match connection.as_mut().poll_next(cx) {
                    Poll::Ready(Some(Ok(_))) => {}
                    Poll::Ready(Some(Err(e))) => {
                        *connection = Box::pin(futures_util::stream::empty());
                        *reason = Some(e);
                        break;
                    }
                    Poll::Ready(None) | Poll::Pending => break,
                }
            }
            match work.as_mut().poll(cx) {
                Poll::Pending => match reason.take() {
                    Some(e) => Poll::Ready(Err(e)),
                    None => Poll::Pending,
                },
                Poll::Ready(Err(e)) => Poll::Ready(Err(with_reason(e, reason))),
                done => done,
            }
        }))
    }

    /// Moves messages until the connection has ended (after the client's Terminate).
    fn finish(&mut self) {
        let connection = &mut self.connection;
        self.runtime.block_on(future::poll_fn(|cx| loop {
            match connection.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(Some(Err(_)) | None) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }));
    }
}

/// A statement's error, or the server's reason for ending the session when the statement
/// only saw the connection close.
fn with_reason(e: Error, reason: &mut Option<Error>) -> Error {
    match reason.take() {
        Some(why) if e.as_db_error().is_none() => why,
        kept => {
            *reason = kept;
            e
        }
    }
}

/// A parameter of a pipelined or bound statement.
pub(super) type Param<'a> = &'a (dyn ToSql + Sync);

/// One statement of a pipeline.
pub(super) enum Step<'a> {
    /// By the simple-query protocol (no parameters, no rows kept): BEGIN, COMMIT.
    Simple(&'a str),
    /// A prepared statement with its values; its rows.
    Bound(&'a Statement, Vec<Param<'a>>),
    /// A statement parsed, planned for its values and run (not kept); its rows.
    OneShot(&'a str, Vec<(Param<'a>, Type)>),
}

pub(super) struct Session {
    driver: Driver,
    client: Client,
}

impl Session {
    /// Connects as `config` says, over `tls`.
    pub(super) fn connect<T>(config: &Config, tls: T) -> Result<Session, Error>
    where
        T: MakeTlsConnect<Socket> + 'static + Send,
        T::TlsConnect: Send,
        T::Stream: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        let runtime = runtime();
        let (client, connection) = runtime.block_on(config.connect(tls))?;
        Ok(Session {
            driver: Driver {
                runtime,
                connection: Box::pin(Connection(connection)),
                reason: None,
            },
            client,
        })
    }

    pub(super) fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.driver.block_on(self.client.batch_execute(sql))
    }

    pub(super) fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        self.driver.block_on(self.client.simple_query(sql))
    }

    pub(super) fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        self.driver.block_on(self.client.prepare(sql))
    }

    /// Several statements prepared in one round trip: each one's statement or error, in
    /// order (the outer error: the connection failed).
    pub(super) fn prepare_all(
        &mut self,
        texts: &[&str],
    ) -> Result<Vec<Result<Statement, Error>>, Error> {
        let client = &self.client;
        let each = texts.iter().map(|text| client.prepare(text));
        self.driver
            .block_on(async { Ok(futures_util::future::join_all(each).await) })
    }

    pub(super) fn execute(
        &mut self,
        statement: &Statement,
        params: &[Param],
    ) -> Result<u64, Error> {
        self.driver.block_on(self.client.execute(statement, params))
    }

    /// The steps sent at once, in order, and answered in order: each one's rows and how
    /// many rows it changed, or its error (the outer error: the connection failed). After
    /// an error inside a transaction the steps behind it fail too (the transaction is
    /// aborted); the first error is the news.
    pub(super) fn pipeline(&mut self, steps: &[Step]) -> Result<Vec<Answer>, Error> {
        let client = &self.client;
        let each = steps.iter().map(|step| async move {
            match step {
                Step::Simple(sql) => client.batch_execute(sql).await.map(|()| (Vec::new(), 0)),
                Step::Bound(statement, params) => {
                    let rows = client.query_raw(*statement, params.iter().copied()).await?;
                    collect(rows).await
                }
                Step::OneShot(sql, params) => {
                    let rows = client.query_typed_raw(sql, params.iter().cloned()).await?;
                    collect(rows).await
                }
            }
        });
        let answers = self
            .driver
            .block_on(async { Ok(futures_util::future::join_all(each).await) })?;
        Ok(answers
            .into_iter()
            .map(|answer| answer.map_err(|e| with_reason(e, &mut self.driver.reason)))
            .collect())
    }

    /// `COPY ... FROM STDIN` with the data in `chunks`; how many rows the server took.
    pub(super) fn copy_in(
        &mut self,
        sql: &str,
        chunks: impl Iterator<Item = Bytes>,
    ) -> Result<u64, Error> {
        let client = &self.client;
        self.driver.block_on(async move {
            let sink = client.copy_in::<_, Bytes>(sql).await?;
            let mut sink = pin!(sink);
            for chunk in chunks {
                sink.send(chunk).await?;
            }
            sink.as_mut().finish().await
        })
    }

    pub(super) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    pub(super) fn cancel_token(&self) -> CancelToken {
        self.client.cancel_token()
    }

    /// Runs refinery's migrations on this session (the outer error: the connection
    /// failed).
    pub(super) fn migrate(
        &mut self,
        runner: &refinery::Runner,
    ) -> Result<Result<refinery::Report, refinery::Error>, Error> {
        let Session { driver, client } = self;
        driver.block_on(async { Ok(runner.run_async(client).await) })
    }
}

impl Drop for Session {
    /// Ends the session as the `postgres` crate does: Terminate, then the connection read
    /// to its end, so that the server lets go of the session's locks at once.
    fn drop(&mut self) {
        self.client.__private_api_close();
        self.driver.finish();
    }
}

/// A statement's rows and how many rows it changed.
pub(super) type Answer = Result<(Vec<Row>, u64), Error>;

async fn collect(rows: RowStream) -> Result<(Vec<Row>, u64), Error> {
    let mut rows = pin!(rows);
    let mut all = Vec::new();
    while let Some(row) = rows.next().await {
        all.push(row?);
    }
    let changed = rows.rows_affected().unwrap_or(0);
    Ok((all, changed))
}

/// A runtime for one session (or one cancel request).
pub(super) fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime starts")
}

struct Connection<S, T>(tokio_postgres::Connection<S, T>);

impl<S, T> Stream for Connection<S, T>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: AsyncRead + AsyncWrite + Unpin,
{
    type Item = Result<AsyncMessage, Error>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        self.0.poll_message(cx)
    }
}
