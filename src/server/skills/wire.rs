//! The results of the extension's methods, computed from a [`SkillSet`]: `skills/list`,
//! `skills/get`, `resources/read` of skill files, `resources/directory/read`, and the
//! `SKILL.md` resources for `resources/list`.
//!
//! The cache fields of 2026 results (`resultType`, `ttlMs`, `cacheScope`) are added by the
//! router, not here.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use super::{Content, SkillSet, file_resource, mime_type, uri};
use crate::error::McpError;
use crate::protocol::{ReadResourceResult, Resource, ResourceContents};
use crate::server::pagination;

/// `{ <key>: items, "nextCursor"? }`.
fn page_result(key: &str, items: Vec<Value>, next: Option<String>) -> Value {
    let mut result = Map::new();
    result.insert(key.to_owned(), Value::Array(items));
    if let Some(next) = next {
        result.insert("nextCursor".to_owned(), Value::String(next));
    }
    Value::Object(result)
}

/// The contents of a file: text when its bytes are UTF-8, else a base64 blob.
fn contents(uri: &str, path: &str, bytes: &[u8]) -> ResourceContents {
    let mime = Some(mime_type(path).to_owned());
    match std::str::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(uri, mime, text),
        Err(_) => ResourceContents::blob(uri, mime, STANDARD.encode(bytes)),
    }
}

impl SkillSet {
    /// The `skills/list` result: `{ "skills": [Skill, ...], "nextCursor"? }`, entries sorted by
    /// `uri`, `page_size` entries a page (all when `None`). Each entry is
    /// `{ uri, frontmatter, resources }`, `resources` being every file with its digest
    /// (`sha256:<hex>`) and size, or `"dynamic"`. An unknown cursor is `-32602`.
    pub fn list(&self, cursor: Option<&str>, page_size: Option<usize>) -> Result<Value, McpError> {
        let (page, next) = pagination::page(&self.index.entries, cursor, page_size)?;
        let skills = page.into_iter().map(|entry| (*entry).clone()).collect();
        Ok(page_result("skills", skills, next))
    }

    /// The `skills/get` result for the skill whose `SKILL.md` is at `uri`: `{ "skill": Skill }`.
    /// `-32602` for any URI that is not a served skill's `SKILL.md`.
    pub fn get(&self, uri: &str) -> Result<Value, McpError> {
        let not_served = || McpError::invalid_params(format!("No skill is served at {uri}"));
        let path = uri::parse(uri).ok().flatten().ok_or_else(not_served)?;
        let skill_path = path.strip_suffix("/SKILL.md").ok_or_else(not_served)?;
        let skill = self.index.skills.get(skill_path).ok_or_else(not_served)?;
        let mut result = Map::new();
        result.insert("skill".to_owned(), skill.entry());
        Ok(Value::Object(result))
    }

    /// The `resources/read` result for a skill file.
    ///
    /// `None` when `uri` is not ours: not a `skill://` URI, or one that neither a served skill
    /// nor one of their directories holds (the caller may try its other resources). Otherwise:
    /// the file (`text/markdown` for `SKILL.md`, else the type its extension suggests; text
    /// when UTF-8, else a base64 blob), read from the snapshot or, for a dynamic skill, from its
    /// reader; `-32602` for a malformed `skill://` URI (`..`, `%2F`, empty segments...) and for
    /// a directory (the extension defines no read of a directory resource: it is listed with
    /// `resources/directory/read`); the not-found error ([`McpError::resource_not_found`]) for
    /// a file a served skill does not have.
    pub fn read(&self, uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
        let path = match uri::parse(uri) {
            Ok(Some(path)) => path,
            Ok(None) => return None,
            Err(reason) => {
                return Some(Err(McpError::invalid_params(format!(
                    "invalid skill URI {uri}: {reason}"
                ))));
            }
        };
        let found = |contents| {
            Some(Ok(ReadResourceResult {
                contents: vec![contents],
                meta: None,
            }))
        };
        if let Some(data) = self.index.files.get(&path) {
            return found(contents(uri, &path, &data.bytes));
        }
        if self.index.dirs.contains_key(&path) {
            return Some(Err(McpError::invalid_params(format!(
                "{uri} is a directory resource; list it with resources/directory/read"
            ))));
        }
        let skill = self.index.skill_holding(&path)?;
        if let Content::Dynamic { reader, .. } = &skill.content {
            let file = &path[skill.path.len() + 1..];
            if let Some(bytes) = reader(file) {
                return found(contents(uri, &path, &bytes));
            }
        }
        Some(Err(McpError::resource_not_found(uri)))
    }

    /// The `resources/directory/read` result for the directory at `uri`:
    /// `{ "resources": [Resource, ...], "nextCursor"? }`, its direct children sorted by name,
    /// `page_size` a page (all when `None`).
    ///
    /// Directories are the directories of the served files: skill roots
    /// (`skill://pdf-processing`), their subdirectories, and the prefix directories above them
    /// (`skill://acme`, `skill://acme/billing`); directories hold no empty directory. Files
    /// carry `uri`, `name`, `mimeType` and `size` (a skill's `SKILL.md` is named and described
    /// from its frontmatter); subdirectories carry `uri`, `name` and `mimeType:
    /// "inode/directory"`. A dynamic skill's root lists its `SKILL.md` alone: its reader
    /// cannot enumerate files. `-32602` for a URI that is not such a directory, and for an
    /// unknown cursor.
    pub fn read_directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
        page_size: Option<usize>,
    ) -> Result<Value, McpError> {
        let not_dir = || McpError::invalid_params(format!("{uri} is not a directory resource"));
        let path = uri::parse(uri).ok().flatten().ok_or_else(not_dir)?;
        let children = self.index.dirs.get(&path).ok_or_else(not_dir)?;
        let (page, next) = pagination::page(children, cursor, page_size)?;
        let resources = page
            .iter()
            .map(|resource| serde_json::to_value(resource).unwrap_or(Value::Null))
            .collect();
        Ok(page_result("resources", resources, next))
    }

    /// The `SKILL.md` resource of every served skill, sorted by URI, for `resources/list`:
    /// `name` and `description` from the frontmatter, `mimeType: "text/markdown"` and `size`.
    ///
    /// The extension does not require skill files in `resources/list` (directory resources
    /// "need not appear" there); it says how a `SKILL.md` resource is described wherever it
    /// appears. Supporting files are left out; they are listed by `skills/list` entries and
    /// `resources/directory/read`.
    pub fn resources(&self) -> Vec<Resource> {
        let mut resources: Vec<Resource> = self
            .index
            .skills
            .values()
            .filter_map(|skill| {
                let full = format!("{}/SKILL.md", skill.path);
                let data = self.index.files.get(&full)?;
                Some(file_resource(&self.index.skills, &full, data))
            })
            .collect();
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        resources
    }
}
