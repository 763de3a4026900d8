//! A raw WebSocket echo server (actix-ws, the bridge's own stack) in a process of its
//! own, the baseline the benchmarks compare the bridge against.

use std::net::TcpListener;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use actix_ws::AggregatedMessage;
use futures_util::StreamExt;

/// The flag that turns the benchmark binary into the echo server.
pub const SERVE_ECHO: &str = "--serve-echo";

/// Runs the echo server when the binary was started with [`SERVE_ECHO`]; returns
/// whether it did (the caller then exits).
pub fn serve_if_asked() -> bool {
    if !std::env::args().any(|a| a == SERVE_ECHO) {
        return false;
    }
    serve_echo();
    true
}

/// The echo server runs in its own process, like the bridge, so both baselines pay
/// the same scheduling costs.
pub fn spawn_echo_process() -> (KillOnDrop, u16) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .arg(SERVE_ECHO)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("echo server prints its port");
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

fn serve_echo() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    actix_rt::System::new().block_on(async move {
        HttpServer::new(|| App::new().route("/", web::get().to(echo)))
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
    let (response, mut session, stream) = actix_ws::handle(&req, body)?;
    let mut stream = stream.max_frame_size(16 << 20).aggregate_continuations();
    actix_rt::spawn(async move {
        while let Some(Ok(msg)) = stream.next().await {
            let ok = match msg {
                AggregatedMessage::Text(text) => session.text(text).await.is_ok(),
                AggregatedMessage::Ping(data) => session.pong(&data).await.is_ok(),
                AggregatedMessage::Close(_) => false,
                _ => true,
            };
            if !ok {
                break;
            }
        }
    });
    Ok(response)
}
