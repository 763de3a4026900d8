//! A scriptable editor extension simulator: it connects with `x-claude-ide-extension`,
//! says `extension/hello`, answers `extension/*` requests through a handler (at once,
//! late, with an error, never, or by dropping the connection mid-request, or manually
//! from the test), pushes notifications, and records everything it receives.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream::{SplitSink, StreamExt};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::harness::{Agent, Bridge, DEADLINE};

type Sink = SplitSink<WebSocketStream<MaybeTlsStream<TcpStream>>, Message>;

/// How the simulated editor answers one request.
#[derive(Clone)]
pub enum Reply {
    /// A result.
    Ok(Value),
    /// A JSON-RPC error with this message.
    Err(String),
    /// The reply, after a delay.
    After(Duration, Box<Reply>),
    /// No answer at all.
    Never,
    /// No answer now: the test answers with [`EditorSim::respond`].
    Manual,
    /// Close the connection instead of answering.
    Drop,
}

/// Decides the reply to `(method, params)`.
pub type Handler = Arc<dyn Fn(&str, &Value) -> Reply + Send + Sync>;

/// Answers every request with `{}`... except as `f` says.
pub fn handler(f: impl Fn(&str, &Value) -> Option<Reply> + Send + Sync + 'static) -> Handler {
    Arc::new(move |m, p| f(m, p).unwrap_or(Reply::Ok(json!({"ok": true}))))
}

/// One request the editor received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Request id.
    pub id: Value,
    /// Method.
    pub method: String,
    /// Params.
    pub params: Value,
}

#[derive(Default)]
struct Log {
    requests: Vec<Received>,
    notifications: Vec<(String, Value)>,
    closed: bool,
}

/// A connected simulator.
pub struct EditorSim {
    sink: Arc<tokio::sync::Mutex<Sink>>,
    log: Arc<Mutex<Log>>,
    reader: tokio::task::JoinHandle<()>,
}

impl EditorSim {
    /// Connects with the bridge's token and sends `extension/hello`.
    pub async fn connect(bridge: &Bridge, handler: Handler) -> EditorSim {
        Self::connect_with_token(bridge.port, &bridge.token, handler)
            .await
            .expect("editor connects")
    }

    /// Connects with an arbitrary token.
    pub async fn connect_with_token(
        port: u16,
        token: &str,
        handler: Handler,
    ) -> Result<EditorSim, tokio_tungstenite::tungstenite::Error> {
        let agent = Agent::connect_raw(port, &[("x-claude-ide-extension", token)]).await?;
        let (sink, mut stream) = agent.into_ws().split();
        let sink = Arc::new(tokio::sync::Mutex::new(sink));
        let log = Arc::new(Mutex::new(Log::default()));
        let (s2, l2) = (Arc::clone(&sink), Arc::clone(&log));
        let reader = tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Message::Text(text) = msg else { continue };
                let v: Value = serde_json::from_str(text.as_str()).unwrap();
                let method = v["method"].as_str().unwrap_or_default().to_string();
                if v.get("id").is_none() {
                    l2.lock()
                        .unwrap()
                        .notifications
                        .push((method, v["params"].clone()));
                    continue;
                }
                let received = Received {
                    id: v["id"].clone(),
                    method: method.clone(),
                    params: v["params"].clone(),
                };
                l2.lock().unwrap().requests.push(received.clone());
                let reply = handler(&method, &v["params"]);
                let id = received.id.clone();
                if matches!(reply, Reply::After(..)) {
                    let s3 = Arc::clone(&s2);
                    tokio::spawn(async move { answer(&s3, id, reply).await });
                } else {
                    // An immediate answer goes out before the next frame is read.
                    answer(&s2, id, reply).await;
                }
            }
            l2.lock().unwrap().closed = true;
        });
        let sim = EditorSim { sink, log, reader };
        sim.notify(
            "extension/hello",
            json!({"extensionVersion": "9.9.9", "packageVersion": "1.2.3"}),
        )
        .await;
        Ok(sim)
    }

    /// Pushes a notification to the bridge.
    pub async fn notify(&self, method: &str, params: Value) {
        let text = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        let _ = self.sink.lock().await.send(Message::text(text)).await;
    }

    /// Returns once the bridge has handled every frame this editor sent before: a new
    /// `extension/hello` carrying a fresh marker is sent after them on the same socket,
    /// and `/status` is polled until it shows that marker.
    pub async fn barrier(&self, bridge: &Bridge) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let marker = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.notify(
            "extension/hello",
            json!({"extensionVersion": "9.9.9", "packageVersion": "1.2.3", "barrier": marker}),
        )
        .await;
        bridge
            .wait_status("the editor's frames handled", |s| {
                (s["extension"]["hello"]["barrier"] == marker).then_some(())
            })
            .await;
    }

    /// Answers a request held with [`Reply::Manual`].
    pub async fn respond(&self, id: &Value, result: Value) {
        let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        let _ = self.sink.lock().await.send(Message::text(text)).await;
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Received> {
        self.log.lock().unwrap().requests.clone()
    }

    /// Notifications the bridge sent to the editor.
    pub fn notifications(&self) -> Vec<(String, Value)> {
        self.log.lock().unwrap().notifications.clone()
    }

    /// Waits for a request with `method` (the `n`-th, 0-based).
    pub async fn wait_request(&self, method: &str, n: usize) -> Received {
        let end = Instant::now() + DEADLINE;
        loop {
            if let Some(r) = self
                .requests()
                .into_iter()
                .filter(|r| r.method == method)
                .nth(n)
            {
                return r;
            }
            assert!(Instant::now() < end, "editor never received {method}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits for a bridge notification with `method`.
    pub async fn wait_notification(&self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + DEADLINE;
        loop {
            if let Some((_, p)) = self
                .notifications()
                .into_iter()
                .find(|(m, p)| m == method && pred(p))
            {
                return p;
            }
            assert!(Instant::now() < end, "editor never got {method}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Closes the connection.
    pub async fn disconnect(self) {
        let _ = self.sink.lock().await.close().await;
        self.reader.abort();
    }
}

async fn answer(sink: &tokio::sync::Mutex<Sink>, id: Value, reply: Reply) {
    let mut reply = reply;
    loop {
        match reply {
            Reply::After(d, next) => {
                tokio::time::sleep(d).await;
                reply = *next;
            }
            Reply::Ok(result) => {
                let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                let _ = sink.lock().await.send(Message::text(text)).await;
                return;
            }
            Reply::Err(message) => {
                let text =
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": message}})
                        .to_string();
                let _ = sink.lock().await.send(Message::text(text)).await;
                return;
            }
            Reply::Never | Reply::Manual => return,
            Reply::Drop => {
                let _ = sink.lock().await.close().await;
                return;
            }
        }
    }
}
