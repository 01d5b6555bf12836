//! A failed API call, typed: the data the retry table decides on.
//!
//! `cluster::api` builds an [`ApiFailure`] from a response's `Status` body — the code, the
//! [`Reason`], [`StatusDetails`] and the field-manager conflicts of `details.causes`,
//! `retryAfterSeconds` — or, when no response arrived, from the transport error's source chain
//! ([`TransportKind::of`]). `cluster::discovery` builds the one failure kfctl decides itself,
//! [`Reason::NoKindMatch`]. The message is kept for people, and for the few retry rows whose
//! only evidence is text (`Evidence::MessageOnly` in the table).

use std::error::Error;
use std::time::Duration;

/// One failed API call, reduced to what classification and messages need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiFailure {
    /// HTTP status; `None` when no response arrived (connection refused, dropped, timed out).
    pub status: Option<u16>,
    /// The Kubernetes `Status.reason`, kfctl's own [`Reason::NoKindMatch`], or the transport kind.
    pub(crate) reason: Reason,
    /// The server's message, or the transport error's.
    pub message: String,
    /// From the `Retry-After` header, or `Status.details.retryAfterSeconds`.
    pub(crate) retry_after: Option<Duration>,
    /// Field conflicts of a server-side apply (`details.causes` of type `FieldManagerConflict`).
    pub(crate) conflicts: Vec<FieldConflict>,
    /// `Status.details`: which object the server means; empty when it sent none.
    pub(crate) details: StatusDetails,
    /// The request that failed (`GET /version`); set by `cluster::api` when it gives up.
    pub(crate) request: String,
    /// The run's `--timeout` ended the call: an attempt cut short by the deadline, or no time
    /// left for another attempt (set by `cluster::api`).
    pub(crate) out_of_time: bool,
}

/// A field another manager owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldConflict {
    pub(crate) field: String,
    pub(crate) manager: String,
}

/// `Status.details`: the object a failure is about. A missing object's 404 names it; the 404
/// of a URL the server does not route (a resource type it does not serve) has no details.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusDetails {
    /// API group, empty for the core group.
    pub(crate) group: String,
    /// The resource, plural (`deployments`): the API server puts it in the field named `kind`.
    pub(crate) kind: String,
    pub(crate) name: String,
}

impl StatusDetails {
    pub(crate) fn is_empty(&self) -> bool {
        self.group.is_empty() && self.kind.is_empty() && self.name.is_empty()
    }
}

/// What broke when no response arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// Nothing listens at the address.
    Refused,
    /// The connection was reset or closed before a whole response arrived.
    Dropped,
    /// Connecting or reading took longer than the client's timeout.
    TimedOut,
    /// The TLS layer refused the connection (certificate, protocol).
    Tls,
    /// Anything else the chain does not name.
    Other,
}

/// Declares [`Reason`] with the `Status.reason` values of `k8s.io/apimachinery` (variant name
/// = wire text), so parsing and printing come from one list.
macro_rules! reasons {
    ($($wire:ident),* $(,)?) => {
        /// `Status.reason`, plus what kfctl's own code sets (never sent by a server).
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub enum Reason {
            /// No `Status` body, or an empty reason (etcd errors passed through, plain-text 5xx).
            #[default]
            Unset,
            $(#[doc = concat!("The server's `", stringify!($wire), "` reason.")] $wire,)*
            /// A reason this list does not know, verbatim.
            Other(String),
            /// kfctl's discovery does not serve the kind at that version (kubectl's
            /// `NoKindMatchError`, a client-side error there too).
            NoKindMatch,
            /// No response arrived.
            Transport(TransportKind),
        }

        impl Reason {
            /// The reason a server sent in its `Status`.
            pub(crate) fn from_status(text: &str) -> Reason {
                match text {
                    "" => Reason::Unset,
                    $(stringify!($wire) => Reason::$wire,)*
                    other => Reason::Other(other.to_string()),
                }
            }

            /// The wire text (`NoKindMatch` and `Transport` for kfctl's own).
            pub(crate) fn as_str(&self) -> &str {
                match self {
                    Reason::Unset => "",
                    $(Reason::$wire => stringify!($wire),)*
                    Reason::Other(text) => text,
                    Reason::NoKindMatch => "NoKindMatch",
                    Reason::Transport(_) => "Transport",
                }
            }
        }
    };
}

reasons!(
    Unauthorized,
    Forbidden,
    NotFound,
    AlreadyExists,
    Conflict,
    Gone,
    Invalid,
    ServerTimeout,
    StoreReadError,
    Timeout,
    TooManyRequests,
    BadRequest,
    MethodNotAllowed,
    NotAcceptable,
    RequestEntityTooLarge,
    UnsupportedMediaType,
    InternalError,
    Expired,
    ServiceUnavailable,
);

impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(code) if self.reason != Reason::Unset => {
                write!(f, "{code} {}: {}", self.reason.as_str(), self.message)
            }
            Some(code) => write!(f, "{code}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl ApiFailure {
    /// The transport kind, when no response arrived.
    pub fn transport(&self) -> Option<TransportKind> {
        match self.reason {
            Reason::Transport(kind) => Some(kind),
            _ => None,
        }
    }

    /// Discovery does not serve the kind ([`Reason::NoKindMatch`]).
    pub(crate) fn is_no_kind_match(&self) -> bool {
        self.reason == Reason::NoKindMatch
    }

    /// A 404 for the resource type, not an object: the server's catch-all `NotFound` handler
    /// ("the server could not find the requested resource") sends no details, while a missing
    /// object's `NotFound` names it in `details`.
    pub fn is_unserved_resource(&self) -> bool {
        self.status == Some(404) && self.reason == Reason::NotFound && self.details.is_empty()
    }

    /// A 404 naming a namespace (`namespaces "kf" not found`): the namespace an object is
    /// written into does not exist (yet).
    pub fn is_missing_namespace(&self) -> bool {
        self.status == Some(404)
            && self.reason == Reason::NotFound
            && self.details.group.is_empty()
            && self.details.kind == "namespaces"
    }
}

impl TransportKind {
    /// The kind an error's source chain names, outermost first: an `io::Error`'s kind, a
    /// closed or timed-out hyper connection, a rustls error. `io::Error`s are looked into
    /// (their `source()` skips the error they wrap, which is where TLS errors sit).
    pub(crate) fn of(error: &(dyn Error + 'static)) -> TransportKind {
        let mut current = Some(error);
        while let Some(link) = current {
            if let Some(kind) = Self::of_link(link) {
                return kind;
            }
            current = match link.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref) {
                Some(inner) => Some(inner as &(dyn Error + 'static)),
                None => link.source(),
            };
        }
        TransportKind::Other
    }

    fn of_link(link: &(dyn Error + 'static)) -> Option<TransportKind> {
        if link.is::<rustls::Error>() || matches!(link.downcast_ref(), Some(kube::Error::RustlsTls(_))) {
            return Some(TransportKind::Tls);
        }
        if let Some(e) = link.downcast_ref::<hyper::Error>() {
            if e.is_timeout() {
                return Some(TransportKind::TimedOut);
            }
            return (e.is_incomplete_message() || e.is_closed() || e.is_canceled()).then_some(TransportKind::Dropped);
        }
        use std::io::ErrorKind as Io;
        match link.downcast_ref::<std::io::Error>()?.kind() {
            Io::ConnectionRefused => Some(TransportKind::Refused),
            Io::ConnectionReset | Io::ConnectionAborted | Io::BrokenPipe | Io::UnexpectedEof | Io::NotConnected => {
                Some(TransportKind::Dropped)
            }
            Io::TimedOut => Some(TransportKind::TimedOut),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// An error wrapping another the way connectors do (`source()` returns it).
    #[derive(Debug)]
    struct Wrapper(Box<dyn Error + Send + Sync>);

    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "client error")
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&*self.0)
        }
    }

    #[test]
    fn reasons_round_trip_and_unknown_ones_are_kept() {
        for text in ["NotFound", "Conflict", "InternalError", "TooManyRequests", "StoreReadError", ""] {
            assert_eq!(Reason::from_status(text).as_str(), text);
        }
        assert_eq!(Reason::from_status("Teapot"), Reason::Other("Teapot".into()));
        assert_eq!(Reason::from_status("NoKindMatch"), Reason::Other("NoKindMatch".into()), "ours, never parsed");
    }

    #[test]
    fn transport_kind_comes_from_the_source_chain() {
        let refused = Wrapper(Box::new(io::Error::from(io::ErrorKind::ConnectionRefused)));
        assert_eq!(TransportKind::of(&refused), TransportKind::Refused);
        let reset = Wrapper(Box::new(Wrapper(Box::new(io::Error::from(io::ErrorKind::ConnectionReset)))));
        assert_eq!(TransportKind::of(&reset), TransportKind::Dropped);
        assert_eq!(TransportKind::of(&io::Error::from(io::ErrorKind::TimedOut)), TransportKind::TimedOut);
        let tls = io::Error::other(io::Error::new(io::ErrorKind::InvalidData, rustls::Error::DecryptError));
        assert_eq!(TransportKind::of(&Wrapper(Box::new(tls))), TransportKind::Tls);
        let eof = io::Error::other(io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof"));
        assert_eq!(TransportKind::of(&eof), TransportKind::Dropped);
        assert_eq!(
            TransportKind::of(&io::Error::other("connection refused")),
            TransportKind::Other,
            "text is not read"
        );
    }

    #[test]
    fn unserved_resource_missing_object_and_missing_namespace_differ_by_details() {
        let not_found = |details: StatusDetails| ApiFailure {
            status: Some(404),
            reason: Reason::NotFound,
            details,
            ..Default::default()
        };
        let route = not_found(StatusDetails::default());
        assert!(route.is_unserved_resource() && !route.is_missing_namespace());
        let object = not_found(StatusDetails { group: "apps".into(), kind: "deployments".into(), name: "web".into() });
        assert!(!object.is_unserved_resource() && !object.is_missing_namespace());
        let namespace = not_found(StatusDetails { kind: "namespaces".into(), name: "kf".into(), ..Default::default() });
        assert!(namespace.is_missing_namespace() && !namespace.is_unserved_resource());
    }

    #[test]
    fn display_keeps_code_reason_and_message() {
        let f = ApiFailure { status: Some(409), reason: Reason::Conflict, message: "m".into(), ..Default::default() };
        assert_eq!(f.to_string(), "409 Conflict: m");
        let plain =
            ApiFailure { status: Some(500), message: "etcdserver: leader changed".into(), ..Default::default() };
        assert_eq!(plain.to_string(), "500: etcdserver: leader changed");
        let cut = ApiFailure {
            reason: Reason::Transport(TransportKind::Dropped),
            message: "closed".into(),
            ..Default::default()
        };
        assert_eq!((cut.to_string(), cut.transport()), ("closed".into(), Some(TransportKind::Dropped)));
    }
}
