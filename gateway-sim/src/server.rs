//! The simulator's own server: an accept loop that owns the listening
//! socket and every connection, so that faults can act below HTTP.
//!
//! `axum::serve` keeps both to itself, yet two faults need them.
//! `REFUSE_CONNECTIONS` closes the listening socket (a new connect sees
//! ECONNREFUSED), closes the connections already open, and binds the same
//! address again when its time is up. `HANG_BEFORE_PROCESSING` ends by
//! dropping its connection without an answer. So each connection is served
//! in its own task — HTTP/1, as `axum::serve` speaks with axum's default
//! features — and can be closed gracefully, together with the rest of its
//! [`Generation`], or at once through the [`ConnectionHandle`] its requests
//! carry.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::faults::Faults;
use crate::{app, lock, SimState};

/// How long a closing connection may take to finish the request in flight
/// before it is dropped, at shutdown and when a refusal starts.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// Binding again after a refusal is retried this many times, a pause apart,
/// in case something holds the port for a moment.
const REBIND_ATTEMPTS: u32 = 50;
const REBIND_PAUSE: Duration = Duration::from_millis(100);
/// Pause after an accept error that is not about one connection (e.g. out of
/// file descriptors), so the loop does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Serves [`app`] on `listener` until `shutdown` resolves, then gives
/// requests in flight up to a second to finish.
///
/// Logs the bound address, so a caller that bound port 0 can learn the port.
/// Fails only when the address cannot be bound again after a
/// `REFUSE_CONNECTIONS` period.
pub async fn serve(
    listener: TcpListener,
    state: SimState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!("gateway-sim listening on http://{addr}");
    let mut server = Server {
        addr,
        refusals: state.server().attach(),
        router: app(state.clone()),
        state,
        connections: TaskTracker::new(),
        generation: Generation::new(),
    };
    let result = server.run(listener, pin!(shutdown)).await;
    server.generation.close().await;
    server.connections.close();
    server.connections.wait().await;
    result
}

/// A connection's way to end at once, without an answer; in the extensions
/// of every request [`serve`] hands to the router.
#[derive(Clone, Default)]
pub(crate) struct ConnectionHandle {
    abort: CancellationToken,
}

impl ConnectionHandle {
    pub(crate) fn drop_without_answer(&self) {
        self.abort.cancel();
    }
}

/// What `PUT /admin/faults` sends the serve loop to start a refusal.
pub(crate) struct Refusal {
    faults: Faults,
    duration: Duration,
    /// Answered once the port is closed and no open connection will take
    /// another request.
    refusing: oneshot::Sender<()>,
}

/// The admin API's line to the serve loop that owns the socket; empty until
/// [`serve`] runs.
#[derive(Clone, Default)]
pub(crate) struct ServerLink(Arc<Mutex<Option<mpsc::Sender<Refusal>>>>);

/// No serve loop owns the socket: the app is served by another server, or
/// [`serve`] has returned.
#[derive(Debug)]
pub(crate) struct NoServer;

impl ServerLink {
    fn attach(&self) -> mpsc::Receiver<Refusal> {
        let (sender, receiver) = mpsc::channel(1);
        *lock(&self.0) = Some(sender);
        receiver
    }

    /// Puts a `REFUSE_CONNECTIONS` setting in force for `duration`. Returns
    /// once the port is closed and every open connection has stopped taking
    /// requests, so a client that reads the answer can no longer get in.
    pub(crate) async fn refuse(&self, faults: Faults, duration: Duration) -> Result<(), NoServer> {
        let sender = lock(&self.0).clone().ok_or(NoServer)?;
        let (refusing, started) = oneshot::channel();
        let refusal = Refusal {
            faults,
            duration,
            refusing,
        };
        sender.send(refusal).await.map_err(|_| NoServer)?;
        started.await.map_err(|_| NoServer)
    }
}

struct Server {
    addr: SocketAddr,
    state: SimState,
    router: Router,
    refusals: mpsc::Receiver<Refusal>,
    connections: TaskTracker,
    generation: Generation,
}

impl Server {
    /// Accepts until `shutdown` resolves; the listener is closed on return.
    async fn run(
        &mut self,
        mut listener: TcpListener,
        mut shutdown: Pin<&mut impl Future<Output = ()>>,
    ) -> io::Result<()> {
        loop {
            tokio::select! {
                biased;
                () = shutdown.as_mut() => return Ok(()),
                Some(refusal) = self.refusals.recv() => {
                    match self.refuse(listener, refusal, shutdown.as_mut()).await? {
                        Some(reopened) => listener = reopened,
                        None => return Ok(()),
                    }
                }
                accepted = listener.accept() => self.accepted(accepted).await,
            }
        }
    }

    /// One refusal: closes the port and the open connections, waits out the
    /// duration, listens again. `None`: shutdown came first.
    async fn refuse(
        &mut self,
        listener: TcpListener,
        refusal: Refusal,
        shutdown: Pin<&mut impl Future<Output = ()>>,
    ) -> io::Result<Option<TcpListener>> {
        if refusal.refusing.is_closed() {
            // Whoever asked is gone, e.g. cut off by an earlier refusal.
            return Ok(Some(listener));
        }
        drop(listener);
        std::mem::replace(&mut self.generation, Generation::new())
            .close()
            .await;
        self.state.set_faults(refusal.faults);
        // Nobody can get in any more; the settings are in force even if the
        // requester has gone meanwhile.
        let _ = refusal.refusing.send(());
        tracing::warn!(
            duration_ms = refusal.duration.as_millis(),
            "REFUSE_CONNECTIONS: {} closed",
            self.addr
        );

        tokio::select! {
            biased;
            () = shutdown => return Ok(None),
            () = tokio::time::sleep(refusal.duration) => {}
        }
        let listener = rebind(self.addr).await?;
        self.state.end_refusal();
        tracing::info!(
            "REFUSE_CONNECTIONS over: listening again on http://{}",
            self.addr
        );
        Ok(Some(listener))
    }

    async fn accepted(&self, accepted: io::Result<(TcpStream, SocketAddr)>) {
        match accepted {
            Ok((stream, peer)) => {
                tracing::debug!(%peer, "connection accepted");
                self.connections.spawn(serve_connection(
                    stream,
                    self.router.clone(),
                    self.generation.member(),
                ));
            }
            Err(err) if is_connection_error(&err) => {
                tracing::debug!("connection failed before accept: {err}");
            }
            Err(err) => {
                tracing::error!("accept failed: {err}");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
            }
        }
    }
}

/// Serves one connection until the client leaves, a handler drops it, or
/// its generation closes (then it finishes the request in flight, within
/// [`CLOSE_GRACE`], and takes no other).
async fn serve_connection(stream: TcpStream, router: Router, member: Member) {
    let handle = ConnectionHandle::default();
    let service = {
        let handle = handle.clone();
        router.map_request(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(handle.clone());
            request
        })
    };
    let mut connection = pin!(http1::Builder::new()
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)));

    tokio::select! {
        result = connection.as_mut() => return log_end(result),
        () = handle.abort.cancelled() => return,
        () = member.closing.cancelled() => {}
    }
    connection.as_mut().graceful_shutdown();
    // Idle, the connection is now closed; busy, it ends after this answer.
    drop(member);
    tokio::select! {
        result = connection => log_end(result),
        () = handle.abort.cancelled() => {}
        () = tokio::time::sleep(CLOSE_GRACE) => {
            tracing::debug!("connection still busy after the close grace; dropped");
        }
    }
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(err) = result {
        tracing::debug!("connection ended: {err}");
    }
}

/// The connections accepted since the listener was last bound, closed
/// together.
struct Generation {
    closing: CancellationToken,
    taking_requests: mpsc::Sender<Infallible>,
    all_stopped: mpsc::Receiver<Infallible>,
}

/// A connection's tie to its generation; dropped once the connection will
/// start no other request.
struct Member {
    closing: CancellationToken,
    _taking_requests: mpsc::Sender<Infallible>,
}

impl Generation {
    fn new() -> Self {
        let (taking_requests, all_stopped) = mpsc::channel(1);
        Self {
            closing: CancellationToken::new(),
            taking_requests,
            all_stopped,
        }
    }

    fn member(&self) -> Member {
        Member {
            closing: self.closing.clone(),
            _taking_requests: self.taking_requests.clone(),
        }
    }

    /// Tells every connection to close and returns once none of them will
    /// start another request; requests in flight may still finish.
    async fn close(self) {
        let Self {
            closing,
            taking_requests,
            mut all_stopped,
        } = self;
        closing.cancel();
        drop(taking_requests);
        // Nothing is ever sent: `recv` ends once every member has let go.
        all_stopped.recv().await;
    }
}

fn is_connection_error(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

async fn rebind(addr: SocketAddr) -> io::Result<TcpListener> {
    let mut attempt = 1;
    loop {
        match TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(err) if attempt < REBIND_ATTEMPTS => {
                tracing::warn!("binding {addr} again (attempt {attempt}): {err}");
                attempt += 1;
                tokio::time::sleep(REBIND_PAUSE).await;
            }
            Err(err) => {
                return Err(io::Error::new(
                    err.kind(),
                    format!("binding {addr} again after REFUSE_CONNECTIONS: {err}"),
                ))
            }
        }
    }
}
