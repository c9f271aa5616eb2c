//! The Skills extension's wire types (`io.modelcontextprotocol/skills`): the `Skill` entry
//! that `skills/list` and `skills/get` return, with its files (`SkillResources`).
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-skills> (`specification/stable/skills.mdx`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The extension's identifier in `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One file of a skill, with the digest and size of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and the 64 lowercase hexadecimal digits of the SHA-256 of its bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A skill's files: every one of them, or `"dynamic"` when its content is generated and has no
/// stable digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// The complete list (`SKILL.md` included).
    Listed(Vec<SkillResource>),
    /// `"dynamic"`.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Listed(files) => files.serialize(serializer),
            Self::Dynamic => serializer.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Listed(Vec<SkillResource>),
            Word(String),
        }
        match Repr::deserialize(deserializer)? {
            Repr::Listed(files) => Ok(Self::Listed(files)),
            Repr::Word(word) if word == "dynamic" => Ok(Self::Dynamic),
            Repr::Word(word) => Err(serde::de::Error::custom(format!(
                "resources is a list of files or \"dynamic\", not {word:?}"
            ))),
        }
    }
}

/// The entry of one skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// Its `SKILL.md` frontmatter, as JSON, every field the author wrote.
    pub frontmatter: Map<String, Value>,
    /// Its files.
    pub resources: SkillResources,
}

impl Skill {
    /// Its name (`frontmatter.name`).
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name")?.as_str()
    }

    /// Its description (`frontmatter.description`).
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description")?.as_str()
    }

    /// The URI of its root directory (its `SKILL.md` URI without `/SKILL.md`).
    pub fn root(&self) -> &str {
        self.uri.strip_suffix("/SKILL.md").unwrap_or(&self.uri)
    }
}

/// Result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The skills of this page.
    pub skills: Vec<Skill>,
    /// The next page's cursor, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillResult {
    /// The skill.
    pub skill: Skill,
}
