//! The loopback TLS server of the fetch tests: std `TcpListener` + rustls, one thread per
//! connection, `Connection: close`, a certificate from a CA generated here with rcgen and trusted
//! only through `FetchOptions::extra_root_ca_pem` / `--ca-file`. It serves what it is routed,
//! counts every request, and can misbehave on demand: cut a body short, answer 503, redirect,
//! stall; anything not routed is a 404.

use super::{upstream, upstream_26_03_1};

use kfctl::source::{FetchOptions, Fetcher};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone)]
pub(super) enum Route {
    Body(Arc<Vec<u8>>),
    /// Send the headers and half the body, then hang up, `failures` times; then serve it.
    CutOff {
        failures: Arc<AtomicUsize>,
        body: Arc<Vec<u8>>,
    },
    /// Answer 503 `failures` times; then serve the body.
    Unavailable {
        failures: Arc<AtomicUsize>,
        body: Arc<Vec<u8>>,
    },
    Redirect(String),
    /// Send the headers and a little of the body, then stall.
    Stall(Duration),
}

pub(super) struct Server {
    pub(super) base: String,
    pub(super) ca_pem: Vec<u8>,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// A server with every upstream archive routed.
    pub(super) fn start() -> Server {
        let routes = upstream().iter().map(|(path, body)| (path.clone(), Route::Body(body.clone()))).collect();
        Server::with_routes(routes)
    }

    pub(super) fn with_routes(routes: HashMap<String, Route>) -> Server {
        kfctl::source::install_crypto_provider();
        let (ca_pem, config) = tls_config();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let routes = Arc::new(Mutex::new(routes));
        let hits = Arc::new(Mutex::new(Vec::new()));
        let (r, h) = (routes.clone(), hits.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (config, r, h) = (config.clone(), r.clone(), h.clone());
                std::thread::spawn(move || serve(stream, config, &r, &h));
            }
        });
        Server { base, ca_pem, routes, hits }
    }

    /// A server with every upstream archive routed, 26.03.1's by its tag and its remote bases too.
    pub(super) fn start_with_26_03_1() -> Server {
        let server = Server::start();
        for (path, body) in upstream_26_03_1() {
            server.route(path, Route::Body(body.clone()));
        }
        server
    }

    pub(super) fn route(&self, path: &str, route: Route) {
        self.routes.lock().unwrap().insert(path.to_string(), route);
    }

    pub(super) fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }

    pub(super) fn hits_of(&self, path: &str) -> usize {
        self.hits().iter().filter(|h| *h == path).count()
    }

    pub(super) fn options(&self) -> FetchOptions {
        FetchOptions {
            github_base: self.base.clone(),
            extra_root_ca_pem: Some(self.ca_pem.clone()),
            backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(40),
            read_timeout: Duration::from_secs(10),
            ..FetchOptions::default()
        }
    }

    pub(super) fn fetcher(&self) -> Arc<Fetcher> {
        Arc::new(Fetcher::new(self.options()).unwrap())
    }
}

/// A CA and a leaf for 127.0.0.1/localhost signed by it: (CA PEM, server config).
fn tls_config() -> (Vec<u8>, Arc<rustls::ServerConfig>) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "kfctl-rs test CA");
    ca_params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let mut leaf_params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    leaf_params.subject_alt_names.push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let leaf = leaf_params.signed_by(&leaf_key, &Issuer::from_params(&ca_params, &ca_key)).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone(), ca_cert.der().clone()];
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    (ca_cert.pem().into_bytes(), Arc::new(config))
}

fn serve(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    routes: &Mutex<HashMap<String, Route>>,
    hits: &Mutex<Vec<String>>,
) {
    let Ok(conn) = rustls::ServerConnection::new(config) else { return };
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut request = Vec::new();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        match tls.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&request);
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
    hits.lock().unwrap().push(path.clone());
    let route = routes.lock().unwrap().get(&path).cloned();
    let head = |status: &str, len: usize, extra: &str| {
        format!("HTTP/1.1 {status}\r\nContent-Length: {len}\r\nConnection: close\r\n{extra}\r\n")
    };
    let _ = match route {
        None => tls.write_all(head("404 Not Found", 0, "").as_bytes()),
        Some(Route::Body(body)) => send(&mut tls, &head("200 OK", body.len(), ""), &body),
        Some(Route::Stall(pause)) => {
            let _ = tls.write_all(head("200 OK", 1000, "").as_bytes());
            let _ = tls.write_all(&[b'x'; 10]);
            let _ = tls.flush();
            std::thread::sleep(pause);
            return;
        }
        Some(Route::Redirect(location)) => {
            tls.write_all(head("302 Found", 0, &format!("Location: {location}\r\n")).as_bytes())
        }
        Some(Route::Unavailable { failures, body }) => {
            if take_failure(&failures) {
                tls.write_all(head("503 Service Unavailable", 0, "").as_bytes())
            } else {
                send(&mut tls, &head("200 OK", body.len(), ""), &body)
            }
        }
        Some(Route::CutOff { failures, body }) => {
            if take_failure(&failures) {
                let _ = tls.write_all(head("200 OK", body.len(), "").as_bytes());
                let _ = tls.write_all(&body[..body.len() / 2]);
                let _ = tls.flush();
                let _ = tls.sock.shutdown(std::net::Shutdown::Both);
                return;
            }
            send(&mut tls, &head("200 OK", body.len(), ""), &body)
        }
    };
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

fn send(tls: &mut impl Write, head: &str, body: &[u8]) -> std::io::Result<()> {
    tls.write_all(head.as_bytes())?;
    tls.write_all(body)
}

fn take_failure(failures: &AtomicUsize) -> bool {
    failures.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
}
