//! The two media types of Streamable HTTP, as its headers carry them (`Content-Type`, each
//! range of `Accept`): read the same way by the server and by the client.

/// One of the media types a Streamable HTTP message travels as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    /// `application/json`: one JSON-RPC message.
    Json,
    /// `text/event-stream`: Server-Sent Events.
    EventStream,
}

impl Media {
    /// The media type `media_type` names (its parameters and spaces aside, in any case), if it
    /// is one of ours; a type that only begins like one (`application/json-seq`) is not.
    pub(crate) fn of(media_type: &[u8]) -> Option<Self> {
        // What the SDKs send, matched at once.
        match media_type {
            b"application/json" => return Some(Self::Json),
            b"text/event-stream" => return Some(Self::EventStream),
            _ => {}
        }
        let essence = essence(media_type);
        if essence.eq_ignore_ascii_case(b"application/json") {
            Some(Self::Json)
        } else if essence.eq_ignore_ascii_case(b"text/event-stream") {
            Some(Self::EventStream)
        } else {
            None
        }
    }
}

/// A media type's `type/subtype`, without its parameters and the spaces around it.
fn essence(media_type: &[u8]) -> &[u8] {
    media_type
        .split(|&byte| byte == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_essence_has_no_parameters_or_spaces() {
        assert_eq!(
            essence(b" application/json ; charset=utf-8"),
            b"application/json"
        );
        assert_eq!(essence(b""), b"");
        assert_eq!(essence(b";x"), b"");
    }

    #[test]
    fn a_media_type_is_ours_whole_in_any_case() {
        assert_eq!(
            Media::of(b"Application/JSON; charset=utf-8"),
            Some(Media::Json)
        );
        assert_eq!(Media::of(b"application/json"), Some(Media::Json));
        assert_eq!(Media::of(b"text/event-stream"), Some(Media::EventStream));
        assert_eq!(Media::of(b" text/event-stream"), Some(Media::EventStream));
        assert_eq!(Media::of(b"application/json-seq"), None);
        assert_eq!(Media::of(b"text/event-streams"), None);
        assert_eq!(Media::of(b"text/plain"), None);
        assert_eq!(Media::of(b""), None);
    }
}
