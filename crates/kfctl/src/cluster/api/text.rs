//! Plain-text reads (a container's log): one attempt, bounded in time like every call and in
//! size by the caller, its failure scrubbed and naming its request like every failure.

use super::ApiClient;
use crate::cluster::failure::{build_failure, status_failure, transport_failure};
use crate::cluster::retry::ApiFailure;
use serde_json::Value;

impl ApiClient {
    /// GET `path_and_query` as text, keeping at most `limit` bytes of the answer (cut at a
    /// character boundary). Not retried: what it reads is best effort (a support bundle's logs).
    pub(crate) async fn get_text(&self, path_and_query: &str, limit: usize) -> Result<String, ApiFailure> {
        let request = http::Request::get(path_and_query).body(Vec::new()).map_err(|e| build_failure(&e))?;
        let wait = self.policy.attempt_wait();
        let answer = match tokio::time::timeout(wait, self.send_text(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(self.timed_out(wait)),
        };
        answer.map(|text| cut(text, limit)).map_err(|mut failure| {
            failure.message = self.redactor.scrub(&failure.message);
            failure.request = format!("GET {}", path_and_query.split('?').next().unwrap_or(""));
            failure
        })
    }

    async fn send_text(&self, request: http::Request<Vec<u8>>) -> Result<String, ApiFailure> {
        let response = self.client.send(request.map(kube::client::Body::from)).await.map_err(transport_failure)?;
        let status = response.status().as_u16();
        let bytes = super::read_body(response.into_body(), status).await?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if status >= 400 {
            let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            return Err(status_failure(status, &body, &text, None));
        }
        Ok(text)
    }
}

/// `text` cut to at most `limit` bytes, at a character boundary.
pub(crate) fn cut(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_is_cut_at_a_character_boundary() {
        assert_eq!(super::cut("héllo".into(), 2), "h");
        assert_eq!(super::cut("héllo".into(), 3), "hé");
        assert_eq!(super::cut("abc".into(), 10), "abc");
    }
}
