//! Content blocks returned by tools and prompts, and their annotations.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result>

use serde::{Deserialize, Serialize};

use super::meta::Meta;
use super::resources::{Resource, ResourceContents};

/// Sender or recipient of a message: `user` or `assistant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human side of the conversation.
    User,
    /// The model side of the conversation.
    Assistant,
}

/// Hints to the client on how to use or display an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the data is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0.0 (optional) to 1.0 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Plain text content (`type: "text"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Item metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text content without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Base64-encoded image content (`type: "image"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image bytes.
    pub data: String,
    /// MIME type of the image, e.g. `image/png`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Item metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Base64-encoded audio content (`type: "audio"`, 2025-03-26+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio bytes.
    pub data: String,
    /// MIME type of the audio, e.g. `audio/wav`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Item metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A link to a resource (`type: "resource_link"`, 2025-06-18+): all [`Resource`] fields inline.
pub type ResourceLink = Resource;

/// Resource contents embedded in a tool result or prompt (`type: "resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The embedded text or blob contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Item metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One block of content in a tool result or prompt message, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `text`: plain text.
    Text(TextContent),
    /// `image`: a base64 image.
    Image(ImageContent),
    /// `audio`: base64 audio (2025-03-26+).
    Audio(AudioContent),
    /// `resource_link`: a link to a resource (2025-06-18+).
    ResourceLink(ResourceLink),
    /// `resource`: embedded resource contents.
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// An image block from base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An audio block from base64 `data` and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(AudioContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> Self {
        Self::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }

    /// A resource link block.
    pub fn resource_link(resource: Resource) -> Self {
        Self::ResourceLink(resource)
    }

    /// The text of a `text` block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The block's annotations, whatever its kind.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            Self::Text(c) => c.annotations.as_ref(),
            Self::Image(c) => c.annotations.as_ref(),
            Self::Audio(c) => c.annotations.as_ref(),
            Self::ResourceLink(c) => c.annotations.as_ref(),
            Self::Resource(c) => c.annotations.as_ref(),
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        Self::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        Self::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        Self::Audio(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        Self::Resource(c)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn constructors_tag_blocks() {
        let v = serde_json::to_value(ContentBlock::text("hi")).unwrap();
        assert_eq!(v, json!({"type": "text", "text": "hi"}));
        let v = serde_json::to_value(ContentBlock::audio("AA==", "audio/wav")).unwrap();
        assert_eq!(
            v,
            json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"})
        );
        let link = ContentBlock::resource_link(Resource::new("file:///a", "a"));
        let v = serde_json::to_value(link).unwrap();
        assert_eq!(
            v,
            json!({"type": "resource_link", "uri": "file:///a", "name": "a"})
        );
    }

    #[test]
    fn unknown_type_is_rejected() {
        assert!(serde_json::from_value::<ContentBlock>(json!({"type": "video"})).is_err());
    }
}
