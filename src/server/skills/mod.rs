//! The content layer of the Skills extension (`io.modelcontextprotocol/skills`), server side:
//! [`SkillSet`], an immutable snapshot of the skills a server serves, and the results of the
//! extension's methods computed from it.
//!
//! Specification: <https://github.com/modelcontextprotocol/ext-skills>
//! (`specification/stable/skills.mdx`); skill format: <https://agentskills.io/specification>.
//!
//! Each file of a skill is a resource `skill://<skill-path>/<file-path>`, where the last
//! segment of `<skill-path>` is the skill's `name` and any earlier segments are an
//! organizational prefix (`skill://acme/billing/refunds/SKILL.md`). A [`SkillSet`] holds every
//! file's bytes in memory, so the digests its entries publish always match what its reads
//! serve, and every lookup is a lookup in that snapshot: no URI reaches the filesystem.
//!
//! Skills come from a directory ([`SkillSet::load`]) or from code ([`SkillDef`]), combined with
//! [`SkillSet::builder`]. The results are built by:
//!
//! - `skills/list`: [`SkillSet::list`];
//! - `skills/get`: [`SkillSet::get`];
//! - `resources/read` of a skill file: [`SkillSet::read`];
//! - `resources/directory/read`: [`SkillSet::read_directory`];
//! - `resources/list`: [`SkillSet::resources`], the `SKILL.md` resources.
//!
//! Declaring the extension (capabilities), routing the methods and the cache fields of 2026
//! results (`resultType`, `ttlMs`, `cacheScope`) are the router's, not this module's.

mod index;
mod load;
mod serve;
mod uri;
mod wire;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::protocol::skill_frontmatter::{self as frontmatter, Frontmatter};
pub(crate) use index::{Index, file_resource};
pub use serve::{SKILLS_EXTENSION, Skills};

/// The most files a skill may have, `SKILL.md` included (the extension's per-skill limit).
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes a skill's files may total (16 MiB, the extension's per-skill limit).
pub const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;

/// The MIME type of directory resources.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// Produces a dynamic skill's supporting file by its path relative to the skill root
/// (`references/GUIDE.md`), at read time; `None` when there is no such file.
pub type SkillReader = Arc<dyn Fn(&str) -> Option<Vec<u8>> + Send + Sync>;

/// Why skills could not be loaded or combined. Each variant names the offending path: a
/// filesystem path for [`SkillSet::load`], a skill path for a [`SkillDef`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// Reading the filesystem failed.
    #[error("{path}: {source}")]
    Io {
        /// The path being read.
        path: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The root given to [`SkillSet::load`] is not a directory.
    #[error("{path}: not a directory")]
    NotADirectory {
        /// The root.
        path: String,
    },
    /// A `SKILL.md` is not UTF-8, has no (or invalid) frontmatter, or lacks a valid `name` or
    /// `description`.
    #[error("{path}: invalid SKILL.md: {reason}")]
    InvalidSkillMd {
        /// The skill.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The last segment of a skill path differs from the frontmatter `name`.
    #[error("{path}: the skill's directory is {directory:?} but its frontmatter name is {name:?}")]
    NameMismatch {
        /// The skill.
        path: String,
        /// The last segment of the skill path.
        directory: String,
        /// The frontmatter `name`.
        name: String,
    },
    /// A skill has more than [`MAX_FILES_PER_SKILL`] files or [`MAX_BYTES_PER_SKILL`] bytes.
    #[error(
        "{path}: the skill has {files} files of {bytes} bytes in all, past the limits of \
         {MAX_FILES_PER_SKILL} files and {MAX_BYTES_PER_SKILL} bytes"
    )]
    TooLarge {
        /// The skill.
        path: String,
        /// Its file count (counted up to the first past the limit).
        files: usize,
        /// Its total size (counted up to the first file past the limit).
        bytes: u64,
    },
    /// A symbolic link resolves outside the root directory.
    #[error("{path}: symbolic link to {target}, outside the root directory")]
    SymlinkEscape {
        /// The link.
        path: String,
        /// Where it resolves.
        target: String,
    },
    /// A symbolic link leads back to a directory that contains it.
    #[error("{path}: symbolic link loop")]
    SymlinkLoop {
        /// The link.
        path: String,
    },
    /// A skill path, file path or file name cannot be served (not UTF-8, empty, `.`, `..`,
    /// holding `\` or NUL, a file that is also a directory, or the root itself being a skill).
    #[error("{path}: invalid path: {reason}")]
    InvalidPath {
        /// The path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Two skills have the same skill path.
    #[error("{path}: two skills have this skill path")]
    Duplicate {
        /// The skill path.
        path: String,
    },
    /// Two skills would serve different content at one URI (a nested skill whose files are
    /// not the enclosing skill's files under its directory, or a dynamic skill nested in or
    /// around another).
    #[error("{path}: conflicts with {other}: {reason}")]
    Conflict {
        /// The inner skill or file.
        path: String,
        /// The other skill.
        other: String,
        /// What differs.
        reason: String,
    },
}

/// A skill built in code: its skill path, its `SKILL.md` text, and either listed files (with
/// digests) or a [`SkillReader`] producing files at read time (`"resources": "dynamic"`).
///
/// It is checked like a skill of a directory when added to a [`SkillSetBuilder`].
#[derive(Clone)]
pub struct SkillDef {
    path: String,
    skill_md: String,
    files: Vec<(String, Vec<u8>)>,
    reader: Option<SkillReader>,
}

impl fmt::Debug for SkillDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillDef")
            .field("path", &self.path)
            .field("files", &self.files.len())
            .field("dynamic", &self.reader.is_some())
            .finish()
    }
}

impl SkillDef {
    /// A skill at `skill_path` (`/`-separated, e.g. `acme/billing/refunds`, its last segment
    /// the frontmatter `name`) whose `SKILL.md` is `skill_md`; add files with [`SkillDef::file`].
    pub fn new(skill_path: impl Into<String>, skill_md: impl Into<String>) -> Self {
        Self {
            path: skill_path.into(),
            skill_md: skill_md.into(),
            files: Vec::new(),
            reader: None,
        }
    }

    /// A skill whose supporting files are produced by `reader` at read time: its entry carries
    /// `"resources": "dynamic"`. `SKILL.md` is `skill_md`, never asked of `reader`.
    pub fn dynamic(
        skill_path: impl Into<String>,
        skill_md: impl Into<String>,
        reader: SkillReader,
    ) -> Self {
        Self {
            reader: Some(reader),
            ..Self::new(skill_path, skill_md)
        }
    }

    /// Adds a supporting file at `relative_path` (`/`-separated, e.g. `scripts/run.py`).
    /// Ignored by dynamic skills, whose files come from their reader.
    pub fn file(mut self, relative_path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((relative_path.into(), bytes.into()));
        self
    }
}

/// One file: its bytes and their digest (`sha256:<hex>`).
#[derive(Debug)]
pub(crate) struct FileData {
    pub(crate) bytes: Vec<u8>,
    pub(crate) digest: String,
}

impl FileData {
    pub(crate) fn new(bytes: Vec<u8>) -> Arc<Self> {
        let hash = Sha256::digest(&bytes);
        let mut digest = String::with_capacity(7 + 64);
        digest.push_str("sha256:");
        for byte in hash.iter() {
            digest.push(char::from(HEX[usize::from(byte >> 4)]));
            digest.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
        Arc::new(Self { bytes, digest })
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// What a skill serves besides its `SKILL.md`.
pub(crate) enum Content {
    /// Every file (relative path → data), `SKILL.md` included.
    Files(BTreeMap<String, Arc<FileData>>),
    /// Produced at read time; `SKILL.md` is held.
    Dynamic {
        skill_md: Arc<FileData>,
        reader: SkillReader,
    },
}

/// A checked skill.
pub(crate) struct SkillRecord {
    pub(crate) path: String,
    pub(crate) uri: String,
    pub(crate) frontmatter: Frontmatter,
    pub(crate) content: Content,
}

impl SkillRecord {
    /// Checks a skill: its path, its `SKILL.md`, its name against its path, its file paths and
    /// its size. `origin` names it in errors.
    pub(crate) fn new(origin: &str, path: String, content: Content) -> Result<Self, SkillError> {
        let invalid_path = |reason: String| SkillError::InvalidPath {
            path: origin.to_owned(),
            reason,
        };
        uri::check_path(&path).map_err(|r| invalid_path(format!("skill path {path:?}: {r}")))?;
        let skill_md = match &content {
            Content::Files(files) => files.get("SKILL.md").cloned(),
            Content::Dynamic { skill_md, .. } => Some(skill_md.clone()),
        };
        let invalid_md = |reason: String| SkillError::InvalidSkillMd {
            path: origin.to_owned(),
            reason,
        };
        let skill_md = skill_md.ok_or_else(|| invalid_md("no SKILL.md".to_owned()))?;
        let text = std::str::from_utf8(&skill_md.bytes)
            .map_err(|_| invalid_md("not UTF-8 text".to_owned()))?;
        let frontmatter = frontmatter::parse(text).map_err(invalid_md)?;
        let directory = path.rsplit('/').next().unwrap_or_default();
        if directory != frontmatter.name {
            return Err(SkillError::NameMismatch {
                path: origin.to_owned(),
                directory: directory.to_owned(),
                name: frontmatter.name,
            });
        }
        if let Content::Files(files) = &content {
            let mut bytes = 0u64;
            for (count, (file, data)) in files.iter().enumerate() {
                uri::check_path(file).map_err(|r| invalid_path(format!("file {file:?}: {r}")))?;
                bytes = bytes.saturating_add(data.bytes.len() as u64);
                if count + 1 > MAX_FILES_PER_SKILL || bytes > MAX_BYTES_PER_SKILL {
                    return Err(SkillError::TooLarge {
                        path: origin.to_owned(),
                        files: count + 1,
                        bytes,
                    });
                }
                if let Some(dir) = prefixes(file).find(|dir| files.contains_key(*dir)) {
                    return Err(invalid_path(format!(
                        "{dir:?} is both a file and a directory"
                    )));
                }
            }
        }
        Ok(Self {
            uri: uri::to_uri(&format!("{path}/SKILL.md")),
            path,
            frontmatter,
            content,
        })
    }

    /// The `Skill` entry of `skills/list` and `skills/get`.
    fn entry(&self) -> Value {
        let resources = match &self.content {
            Content::Files(files) => {
                let mut list: Vec<(String, &Arc<FileData>)> = files
                    .iter()
                    .map(|(file, data)| (uri::to_uri(&format!("{}/{file}", self.path)), data))
                    .collect();
                list.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Array(
                    list.into_iter()
                        .map(|(uri, data)| {
                            json!({"uri": uri, "digest": data.digest, "size": data.bytes.len()})
                        })
                        .collect(),
                )
            }
            Content::Dynamic { .. } => Value::String("dynamic".to_owned()),
        };
        json!({
            "uri": self.uri,
            "frontmatter": Value::Object(self.frontmatter.fields.clone()),
            "resources": resources,
        })
    }
}

/// The proper prefixes of a `/`-separated path, shortest first (`a`, `a/b` for `a/b/c`).
pub(crate) fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(at, _)| &path[..at])
}

/// The MIME type a file is served with: `text/markdown` for `SKILL.md`, else the type its
/// extension suggests, else `application/octet-stream`.
pub(crate) fn mime_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "SKILL.md" {
        return "text/markdown";
    }
    mime_guess::from_path(name)
        .first_raw()
        .unwrap_or("application/octet-stream")
}

/// An immutable snapshot of the skills a server serves. Cheap to clone (an `Arc`).
///
/// Built by [`SkillSet::load`] or [`SkillSet::builder`]; see the [module docs](self).
#[derive(Clone)]
pub struct SkillSet {
    pub(crate) index: Arc<Index>,
}

impl fmt::Debug for SkillSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillSet")
            .field("skills", &self.index.skills.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for SkillSet {
    fn default() -> Self {
        Self::empty()
    }
}

impl SkillSet {
    /// A set without skills.
    pub fn empty() -> Self {
        Self {
            index: Arc::new(Index {
                skills: BTreeMap::new(),
                entries: Vec::new(),
                files: HashMap::new(),
                dirs: HashMap::new(),
            }),
        }
    }

    /// Loads every skill under `dir`: each directory holding a `SKILL.md` is a skill, at its
    /// path relative to `dir` (see [`SkillSetBuilder::dir`] for the rules).
    pub fn load(dir: impl Into<PathBuf>) -> Result<Self, SkillError> {
        Self::builder().dir(dir).build()
    }

    /// A builder combining directories and [`SkillDef`]s.
    pub fn builder() -> SkillSetBuilder {
        SkillSetBuilder::default()
    }

    /// How many skills are served.
    pub fn len(&self) -> usize {
        self.index.skills.len()
    }

    /// Whether no skill is served.
    pub fn is_empty(&self) -> bool {
        self.index.skills.is_empty()
    }

    /// The `SKILL.md` URIs of the served skills, sorted.
    pub fn skill_uris(&self) -> Vec<String> {
        let mut uris: Vec<String> = self.index.skills.values().map(|s| s.uri.clone()).collect();
        uris.sort();
        uris
    }
}

/// Combines skill directories and [`SkillDef`]s into a [`SkillSet`]; nothing is read or checked
/// before [`SkillSetBuilder::build`].
#[derive(Debug, Default)]
pub struct SkillSetBuilder {
    dirs: Vec<PathBuf>,
    defs: Vec<SkillDef>,
}

impl SkillSetBuilder {
    /// Adds every skill under `dir`.
    ///
    /// Every directory holding a file named `SKILL.md` is a skill; its skill path is its path
    /// relative to `dir`. Skills may nest: a skill inside a skill is served as its own entry and
    /// its files remain supporting files of the enclosing skill. Every file of every skill is
    /// read into memory. Files and directories whose names start with `.` are skipped (the
    /// extension says nothing of hidden files; they are left out so that `.git` and editor
    /// droppings are not served), as are files outside every skill. Symbolic links are followed
    /// when they resolve inside `dir`, and refused otherwise; a link back to a directory that
    /// contains it is refused. Directories without files are not served.
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// Adds a skill built in code.
    pub fn skill(mut self, skill: SkillDef) -> Self {
        self.defs.push(skill);
        self
    }

    /// Reads the directories, checks every skill and builds the snapshot. Refused: a skill
    /// that [`SkillError`] describes, and two skills at the same skill path.
    pub fn build(self) -> Result<SkillSet, SkillError> {
        let mut records = Vec::new();
        for dir in &self.dirs {
            records.extend(load::load_dir(dir)?);
        }
        for def in self.defs {
            records.push(def.into_record()?);
        }
        Ok(SkillSet {
            index: Arc::new(Index::new(records)?),
        })
    }
}

impl SkillDef {
    fn into_record(self) -> Result<SkillRecord, SkillError> {
        let skill_md = FileData::new(self.skill_md.into_bytes());
        let content = match self.reader {
            Some(reader) => Content::Dynamic { skill_md, reader },
            None => {
                let mut files = BTreeMap::new();
                files.insert("SKILL.md".to_owned(), skill_md);
                for (file, bytes) in self.files {
                    if files.contains_key(&file) {
                        return Err(SkillError::InvalidPath {
                            path: format!("{}/{file}", self.path),
                            reason: "given twice (SKILL.md is the skill's text)".to_owned(),
                        });
                    }
                    files.insert(file, FileData::new(bytes));
                }
                Content::Files(files)
            }
        };
        SkillRecord::new(&self.path.clone(), self.path, content)
    }
}
