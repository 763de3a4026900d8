//! Raw WebSocket servers on the bridge's own stack (actix-web + actix-ws, one worker,
//! `TCP_NODELAY`), each in a process of its own like the bridge: the baselines the
//! benchmarks compare the bridge against.
//!
//! - **echo** answers every text frame with itself: the floor of one request/response
//!   exchange.
//! - **relay** passes every text frame from the agent to the editor (the connection
//!   that sent `x-claude-ide-extension`) and every text frame from the editor back to
//!   the agent, without looking inside: the floor of forwarding a call to an editor.

use std::cell::RefCell;
use std::net::TcpListener;
use std::thread::LocalKey;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use actix_ws::AggregatedMessage;
use futures_util::StreamExt;

/// Which baseline server a process runs.
#[derive(Clone, Copy)]
pub enum Baseline {
    /// Echo each frame back.
    Echo,
    /// Relay frames between one agent and one editor.
    Relay,
}

impl Baseline {
    fn flag(self) -> &'static str {
        match self {
            Baseline::Echo => "--serve-echo",
            Baseline::Relay => "--serve-relay",
        }
    }
}

/// Runs a baseline server when the benchmark binary was started with its flag;
/// returns whether it did (the caller then exits).
pub fn serve_if_asked() -> bool {
    for baseline in [Baseline::Echo, Baseline::Relay] {
        if std::env::args().any(|a| a == baseline.flag()) {
            serve(baseline);
            return true;
        }
    }
    false
}

/// Starts `baseline` in a child process (this binary again) and returns its port.
pub fn spawn(baseline: Baseline) -> (KillOnDrop, u16) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .arg(baseline.flag())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .parse()
        .expect("baseline server prints its port");
    (KillOnDrop(child), port)
}

/// Kills the child process when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(baseline: Baseline) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    actix_rt::System::new().block_on(async move {
        HttpServer::new(move || {
            let app = App::new();
            match baseline {
                Baseline::Echo => app.route("/", web::get().to(echo)),
                Baseline::Relay => app.route("/", web::get().to(relay)),
            }
        })
        .workers(1)
        .tcp_nodelay(true)
        .listen(listener)
        .unwrap()
        .run()
        .await
        .unwrap();
    });
}

async fn echo(req: HttpRequest, body: web::Payload) -> actix_web::Result<HttpResponse> {
    let (response, session, stream) = actix_ws::handle(&req, body)?;
    pump(session, stream, None);
    Ok(response)
}

type Slot = RefCell<Option<actix_ws::Session>>;

thread_local! {
    // One worker thread, so the two ends of the relay live in thread-locals.
    static AGENT: Slot = const { RefCell::new(None) };
    static EDITOR: Slot = const { RefCell::new(None) };
}

async fn relay(req: HttpRequest, body: web::Payload) -> actix_web::Result<HttpResponse> {
    let (response, session, stream) = actix_ws::handle(&req, body)?;
    let (mine, peer) = if req.headers().contains_key("x-claude-ide-extension") {
        (&EDITOR, &AGENT)
    } else {
        (&AGENT, &EDITOR)
    };
    mine.with(|slot| *slot.borrow_mut() = Some(session.clone()));
    pump(session, stream, Some(peer));
    Ok(response)
}

/// Reads text frames and writes each to `peer` (dropped while it is absent), or back
/// to the sender when there is no peer; answers pings.
fn pump(
    mut own: actix_ws::Session,
    stream: actix_ws::MessageStream,
    peer: Option<&'static LocalKey<Slot>>,
) {
    let mut stream = stream.max_frame_size(16 << 20).aggregate_continuations();
    actix_rt::spawn(async move {
        while let Some(Ok(msg)) = stream.next().await {
            let ok = match msg {
                AggregatedMessage::Text(text) => match peer {
                    None => own.text(text).await.is_ok(),
                    Some(peer) => match peer.with(|slot| slot.borrow().clone()) {
                        Some(mut to) => to.text(text).await.is_ok(),
                        None => true,
                    },
                },
                AggregatedMessage::Ping(data) => own.pong(&data).await.is_ok(),
                AggregatedMessage::Close(_) => false,
                _ => true,
            };
            if !ok {
                break;
            }
        }
    });
}
