//! A time limit on the Kubernetes API calls that must answer promptly: a list (its answer and its whole
//! body) and the start of a watch (until its answer begins). A watch's stream is bounded by kube-rs's own
//! idle timeout instead.
//!
//! kube-rs sets no read timeout by default, so a list the API server never answers waits forever
//! (docs/reference/watches.md §1): the watcher neither fails nor retries, and nothing is logged. This
//! layer turns that into an error, [`NoAnswer`], which the watcher reports and retries with backoff.
//! kube-rs marks each request with its verb (`"list"`, `"watch"`, … as a `&'static str` extension),
//! which is how the layer tells them apart.

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response};
use http_body::{Body, Frame};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The API server did not answer a call within the time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no answer within {}", seconds(*.0))]
pub struct NoAnswer(pub Duration);

/// `60 s`, `0.3 s`.
pub fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

/// The layer: wraps kube-rs's HTTP service.
#[derive(Debug, Clone, Copy)]
pub struct CallTimeoutLayer {
    /// The time limit of a list and of a watch's start.
    pub limit: Duration,
}

impl<S> tower::Layer<S> for CallTimeoutLayer {
    type Service = CallTimeout<S>;
    fn layer(&self, inner: S) -> CallTimeout<S> {
        CallTimeout {
            inner,
            limit: self.limit,
        }
    }
}

/// The service [`CallTimeoutLayer`] makes.
#[derive(Debug, Clone)]
pub struct CallTimeout<S> {
    inner: S,
    limit: Duration,
}

/// What the limit covers for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// Nothing (gets, and whatever kube-rs does besides lists and watches).
    None,
    /// Until the answer begins (a watch streams for minutes once it has begun).
    Start,
    /// Until the whole body has arrived (a list).
    Whole,
}

impl<S, B, ReqBody> tower::Service<Request<ReqBody>> for CallTimeout<S>
where
    S: tower::Service<Request<ReqBody>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Unpin + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Limited<B>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let bound = match request.extensions().get::<&'static str>().copied() {
            Some("list" | "list_metadata") => Bound::Whole,
            Some("watch" | "watch_metadata") => Bound::Start,
            _ => Bound::None,
        };
        let limit = self.limit;
        let answer = self.inner.call(request);
        Box::pin(async move {
            if bound == Bound::None {
                let response = answer.await.map_err(Into::into)?;
                return Ok(response.map(|body| Limited { body, until: None }));
            }
            let deadline = Instant::now() + limit;
            let response = tokio::time::timeout_at(deadline, answer)
                .await
                .map_err(|_| Box::new(NoAnswer(limit)) as BoxError)?
                .map_err(Into::into)?;
            let until = (bound == Bound::Whole)
                .then(|| (Box::pin(tokio::time::sleep_until(deadline)), limit));
            Ok(response.map(|body| Limited { body, until }))
        })
    }
}

/// A body that fails with [`NoAnswer`] when its deadline passes before its end.
pub struct Limited<B> {
    body: B,
    until: Option<(Pin<Box<Sleep>>, Duration)>,
}

impl<B> Body for Limited<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some((sleep, limit)) = this.until.as_mut()
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(Box::new(NoAnswer(*limit)))));
        }
        Pin::new(&mut this.body)
            .poll_frame(cx)
            .map(|frame| frame.map(|f| f.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(60)), "60 s");
        assert_eq!(seconds(Duration::from_millis(300)), "0.3 s");
        assert_eq!(
            NoAnswer(Duration::from_secs(60)).to_string(),
            "no answer within 60 s"
        );
    }
}
