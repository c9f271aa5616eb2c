//! The Skills extension on the client, as the specification asks of hosts: the server's skills
//! ([`Client::skills`], [`Client::skill`]), and a [`SkillLoader`] that fetches a skill's files
//! only when asked, verifies each against its entry (digest, size, and for `SKILL.md` the
//! frontmatter, field by field), refuses files the entry does not list, and caches what it
//! verified under the server's identity and the file's URI.
//!
//! ```no_run
//! # async fn run(client: actix_mcp::client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let loader = client.skill_loader();
//! for skill in client.skills().await? {
//!     println!("{}: {}", skill.uri, skill.description().unwrap_or_default());
//! }
//! let refunds = client.skill("skill://acme/billing/refunds/SKILL.md").await?;
//! let active = loader.activate(&refunds);
//! let instructions = active.instructions().await?; // fetched and verified now
//! let email = active.file("examples/email.md").await?; // only a listed file
//! # Ok(()) }
//! ```
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-skills> (`specification/stable/skills.mdx`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::api::CallOptions;
use super::{Client, ClientError};
use crate::protocol::skills::{
    GetSkillResult, ListSkillsResult, SKILLS_EXTENSION, Skill, SkillResources,
};
use crate::protocol::{ReadResourceResult, ResourceContents};

impl Client {
    /// Whether the server declares the Skills extension.
    pub fn serves_skills(&self) -> bool {
        self.server_extension(SKILLS_EXTENSION).is_some()
    }

    fn require_skills(&self) -> Result<(), ClientError> {
        if self.serves_skills() {
            Ok(())
        } else {
            Err(ClientError::Unsupported(format!(
                "the server does not declare the {SKILLS_EXTENSION} extension"
            )))
        }
    }

    /// One page of `skills/list`.
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] when the server does not declare the extension (nothing
    /// is sent); see [`ClientError`].
    pub async fn list_skills(&self, cursor: Option<&str>) -> Result<ListSkillsResult, ClientError> {
        self.require_skills()?;
        let params = cursor.map(|cursor| json!({ "cursor": cursor }));
        self.request("skills/list", params, CallOptions::default())
            .await
    }

    /// Every skill the server lists (all pages).
    ///
    /// # Errors
    /// As [`list_skills`](Self::list_skills).
    pub async fn skills(&self) -> Result<Vec<Skill>, ClientError> {
        self.require_skills()?;
        self.all_pages("skills/list", |page: ListSkillsResult| {
            (page.skills, page.next_cursor)
        })
        .await
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`): how a host confirms
    /// a skill it learnt of by reference.
    ///
    /// # Errors
    /// As [`list_skills`](Self::list_skills); the server answers `-32602` for a URI that is not
    /// one of its skills.
    pub async fn skill(&self, uri: &str) -> Result<Skill, ClientError> {
        self.require_skills()?;
        let result: GetSkillResult = self
            .request(
                "skills/get",
                Some(json!({ "uri": uri })),
                CallOptions::default(),
            )
            .await?;
        if result.skill.uri != uri {
            return Err(ClientError::Protocol(format!(
                "skills/get for {uri} answered the skill {}",
                result.skill.uri
            )));
        }
        Ok(result.skill)
    }

    /// A loader of this server's skills, its cache keyed by the server's identity
    /// (`serverInfo` name and version; see [`SkillLoader::identity`]).
    pub fn skill_loader(&self) -> SkillLoader {
        SkillLoader {
            client: self.clone(),
            identity: format!("{}@{}", self.server_info().name, self.server_info().version),
            cache: SkillCache::default(),
        }
    }
}

/// Why a skill's file was not given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillLoadError {
    /// Reading it failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The file is not one the skill's entry lists (or not under the skill's root).
    #[error("{uri} is not a file of the skill {skill}")]
    Unlisted {
        /// The file asked for.
        uri: String,
        /// The skill's `SKILL.md` URI.
        skill: String,
    },
    /// Its bytes differ from the entry's digest or size.
    #[error("{uri} does not match its entry: {what}")]
    Mismatch {
        /// The file.
        uri: String,
        /// What differs.
        what: String,
    },
    /// The fetched `SKILL.md`'s frontmatter is unreadable or differs from the entry's.
    #[error("the SKILL.md of {skill}: {reason}")]
    Frontmatter {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// What is wrong.
        reason: String,
    },
}

/// Verified skill files, keyed by the server's identity and the file's URI (with the digest
/// each was verified against). Cheap to clone; clones share the files, so one cache may serve
/// the loaders of several servers ([`SkillLoader::cache`]).
#[derive(Clone, Default)]
pub struct SkillCache {
    files: Arc<Mutex<HashMap<FileKey, Verified>>>,
}

/// A cached file's key: the server's identity and the file's URI.
type FileKey = (String, String);
/// A cached file: the digest it was verified against, and its bytes.
type Verified = (String, Arc<[u8]>);

impl std::fmt::Debug for SkillCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillCache")
            .field("files", &self.len())
            .finish()
    }
}

impl SkillCache {
    /// How many files it holds.
    pub fn len(&self) -> usize {
        self.files.lock().map(|files| files.len()).unwrap_or(0)
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every file of the server `identity`.
    pub fn forget(&self, identity: &str) {
        if let Ok(mut files) = self.files.lock() {
            files.retain(|(server, _), _| server != identity);
        }
    }

    fn get(&self, key: &FileKey, digest: &str) -> Option<Arc<[u8]>> {
        let files = self.files.lock().ok()?;
        let (verified, bytes) = files.get(key)?;
        (verified == digest).then(|| bytes.clone())
    }

    fn put(&self, key: FileKey, digest: String, bytes: Arc<[u8]>) {
        if let Ok(mut files) = self.files.lock() {
            files.insert(key, (digest, bytes));
        }
    }
}

/// Loads the skills of one server on demand, verified. Cheap to clone (clones share the
/// cache). See the [module](self).
#[derive(Clone)]
pub struct SkillLoader {
    client: Client,
    identity: String,
    cache: SkillCache,
}

impl std::fmt::Debug for SkillLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillLoader")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl SkillLoader {
    /// Names the server in the cache's keys (a label the host gives it, so that same-URI
    /// skills of two servers never meet); the default is its `serverInfo` name and version.
    #[must_use]
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// Keeps verified files in `cache` (shared with other loaders) rather than its own.
    #[must_use]
    pub fn cache(mut self, cache: SkillCache) -> Self {
        self.cache = cache;
        self
    }

    /// The server's identity in the cache.
    pub fn server_identity(&self) -> &str {
        &self.identity
    }

    /// Acts on `skill`: nothing is fetched until asked.
    pub fn activate(&self, skill: &Skill) -> ActiveSkill {
        ActiveSkill {
            loader: self.clone(),
            skill: skill.clone(),
        }
    }

    /// How many verified files its cache holds.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }
}

/// A skill being acted on: its files, fetched when asked and verified against its entry.
#[derive(Debug, Clone)]
pub struct ActiveSkill {
    loader: SkillLoader,
    skill: Skill,
}

impl ActiveSkill {
    /// The entry acted on.
    pub fn skill(&self) -> &Skill {
        &self.skill
    }

    /// The skill's `SKILL.md`, fetched (or from the cache) and verified: its bytes against the
    /// entry, its frontmatter against the entry's field by field.
    ///
    /// # Errors
    /// See [`SkillLoadError`].
    pub async fn instructions(&self) -> Result<String, SkillLoadError> {
        let uri = self.skill.uri.clone();
        let bytes = self.fetch(&uri).await?;
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| SkillLoadError::Frontmatter {
            skill: uri.clone(),
            reason: "it is not UTF-8".into(),
        })?;
        let frontmatter = crate::protocol::skill_frontmatter::parse(&text).map_err(|reason| {
            SkillLoadError::Frontmatter {
                skill: uri.clone(),
                reason,
            }
        })?;
        let entry = &self.skill.frontmatter;
        for key in entry.keys().chain(frontmatter.fields.keys()) {
            if entry.get(key) != frontmatter.fields.get(key) {
                return Err(SkillLoadError::Frontmatter {
                    skill: uri,
                    reason: format!("its field `{key}` differs from the skill's entry"),
                });
            }
        }
        Ok(text)
    }

    /// One of the skill's files, by its path under the skill's root (`references/FORMS.md`) or
    /// its full URI, fetched (or from the cache) and verified. A file the entry does not list
    /// is refused without asking the server (for a `"dynamic"` skill: one not under its root).
    ///
    /// # Errors
    /// See [`SkillLoadError`].
    pub async fn file(&self, path: &str) -> Result<Arc<[u8]>, SkillLoadError> {
        let root = self.skill.root();
        let uri = if path.contains("://") {
            path.to_owned()
        } else {
            format!("{root}/{}", path.trim_start_matches('/'))
        };
        self.fetch(&uri).await
    }

    /// Fetches `uri`, refusing a file the entry does not list, and checks it.
    async fn fetch(&self, uri: &str) -> Result<Arc<[u8]>, SkillLoadError> {
        let unlisted = || SkillLoadError::Unlisted {
            uri: uri.to_owned(),
            skill: self.skill.uri.clone(),
        };
        let listed = match &self.skill.resources {
            SkillResources::Listed(files) => Some(
                files
                    .iter()
                    .find(|file| file.uri == uri)
                    .ok_or_else(unlisted)?,
            ),
            SkillResources::Dynamic => {
                let inside = uri
                    .strip_prefix(self.skill.root())
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|rest| {
                        !rest.is_empty()
                            && rest
                                .split('/')
                                .all(|s| !s.is_empty() && s != "." && s != "..")
                    });
                if !inside {
                    return Err(unlisted());
                }
                None
            }
        };
        let key = (self.loader.identity.clone(), uri.to_owned());
        if let Some(file) = listed
            && let Some(bytes) = self.loader.cache.get(&key, &file.digest)
        {
            return Ok(bytes);
        }
        let read = self.loader.client.read_resource(uri).await?;
        let bytes: Arc<[u8]> = contents_bytes(uri, &read)?.into();
        if let Some(file) = listed {
            if bytes.len() as u64 != file.size {
                return Err(SkillLoadError::Mismatch {
                    uri: uri.to_owned(),
                    what: format!("{} bytes, the entry says {}", bytes.len(), file.size),
                });
            }
            let digest = sha256(&bytes);
            if digest != file.digest {
                return Err(SkillLoadError::Mismatch {
                    uri: uri.to_owned(),
                    what: format!("digest {digest}, the entry says {}", file.digest),
                });
            }
            self.loader.cache.put(key, digest, bytes.clone());
        }
        Ok(bytes)
    }
}

/// `sha256:` and the hexadecimal digest of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(71);
    text.push_str("sha256:");
    for byte in Sha256::digest(bytes) {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// The bytes of the one contents item of `uri` in `read`.
fn contents_bytes(uri: &str, read: &ReadResourceResult) -> Result<Vec<u8>, SkillLoadError> {
    let mismatch = |what: &str| SkillLoadError::Mismatch {
        uri: uri.to_owned(),
        what: what.to_owned(),
    };
    let item = read
        .contents
        .iter()
        .find(|item| item.uri() == uri)
        .ok_or_else(|| mismatch("the read answered no contents for it"))?;
    match item {
        ResourceContents::Text(text) => Ok(text.text.clone().into_bytes()),
        ResourceContents::Blob(blob) => base64::engine::general_purpose::STANDARD
            .decode(&blob.blob)
            .map_err(|_| mismatch("its blob is not base64")),
    }
}
