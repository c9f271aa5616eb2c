//! The index of a [`SkillSet`](super::SkillSet): skills by path, entries by URI, files by
//! path and the children of every directory; and the checks that combine skills into one
//! namespace (duplicates, nesting, files that are also directories).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::{
    Content, DIRECTORY_MIME_TYPE, FileData, SkillError, SkillRecord, mime_type, prefixes, uri,
};
use crate::protocol::Resource;

/// Everything a [`SkillSet`] serves, indexed.
pub(crate) struct Index {
    /// Skill path → skill.
    pub(crate) skills: BTreeMap<String, SkillRecord>,
    /// The entries, sorted by `uri`.
    pub(crate) entries: Vec<Arc<Value>>,
    /// Full path (`<skill-path>/<file-path>`) → file, for every held file.
    pub(crate) files: HashMap<String, Arc<FileData>>,
    /// Directory path → its direct children, sorted by name.
    pub(crate) dirs: HashMap<String, Vec<Resource>>,
}

impl Index {
    pub(crate) fn new(records: Vec<SkillRecord>) -> Result<Self, SkillError> {
        let mut skills = BTreeMap::new();
        for record in records {
            if skills.contains_key(&record.path) {
                return Err(SkillError::Duplicate { path: record.path });
            }
            skills.insert(record.path.clone(), record);
        }
        for inner in skills.values() {
            for outer in prefixes(&inner.path).filter_map(|p| skills.get(p)) {
                check_nesting(outer, inner)?;
            }
        }
        let mut files = HashMap::new();
        for skill in skills.values() {
            let held: Vec<(&str, &Arc<FileData>)> = match &skill.content {
                Content::Files(list) => list.iter().map(|(f, d)| (f.as_str(), d)).collect(),
                Content::Dynamic { skill_md, .. } => vec![("SKILL.md", skill_md)],
            };
            for (file, data) in held {
                files.insert(format!("{}/{file}", skill.path), data.clone());
            }
        }
        let mut tree: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        for (full, data) in &files {
            if let Some(dir) = prefixes(full).find(|dir| files.contains_key(*dir)) {
                return Err(SkillError::InvalidPath {
                    path: full.clone(),
                    reason: format!("{dir:?} is both a file and a directory"),
                });
            }
            let mut parent = "";
            for dir in prefixes(full) {
                let name = &dir[parent.len()..].trim_start_matches('/');
                if !parent.is_empty() {
                    let child =
                        Resource::new(uri::to_uri(dir), *name).with_mime_type(DIRECTORY_MIME_TYPE);
                    tree.entry(parent.to_owned())
                        .or_default()
                        .insert((*name).to_owned(), child);
                }
                tree.entry(dir.to_owned()).or_default();
                parent = dir;
            }
            let name = full[parent.len()..].trim_start_matches('/');
            tree.entry(parent.to_owned())
                .or_default()
                .insert(name.to_owned(), file_resource(&skills, full, data));
        }
        let dirs = tree
            .into_iter()
            .map(|(dir, children)| (dir, children.into_values().collect()))
            .collect();
        let mut entries: Vec<(String, Arc<Value>)> = skills
            .values()
            .map(|s| (s.uri.clone(), Arc::new(s.entry())))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Self {
            entries: entries.into_iter().map(|(_, entry)| entry).collect(),
            skills,
            files,
            dirs,
        })
    }

    /// The skill whose directory holds `path` most closely (the skill itself for its root).
    pub(crate) fn skill_holding(&self, path: &str) -> Option<&SkillRecord> {
        let mut candidates: Vec<&str> = prefixes(path).collect();
        candidates.push(path);
        candidates
            .into_iter()
            .rev()
            .find_map(|prefix| self.skills.get(prefix))
    }
}

/// The `Resource` of a held file: for a skill's `SKILL.md`, named and described from its
/// frontmatter.
pub(crate) fn file_resource(
    skills: &BTreeMap<String, SkillRecord>,
    full: &str,
    data: &FileData,
) -> Resource {
    let skill = full
        .strip_suffix("/SKILL.md")
        .and_then(|path| skills.get(path));
    let mut resource = match skill {
        Some(skill) => Resource::new(uri::to_uri(full), skill.frontmatter.name.clone())
            .with_description(skill.frontmatter.description.clone()),
        None => Resource::new(uri::to_uri(full), full.rsplit('/').next().unwrap_or(full)),
    };
    resource.mime_type = Some(mime_type(full).to_owned());
    resource.size = Some(data.bytes.len() as u64);
    resource
}

/// A nested skill must serve exactly what the enclosing skill serves under its directory.
fn check_nesting(outer: &SkillRecord, inner: &SkillRecord) -> Result<(), SkillError> {
    let conflict = |reason: &str| SkillError::Conflict {
        path: inner.path.clone(),
        other: outer.path.clone(),
        reason: reason.to_owned(),
    };
    let (Content::Files(outer_files), Content::Files(inner_files)) =
        (&outer.content, &inner.content)
    else {
        return Err(conflict("a dynamic skill cannot nest or be nested"));
    };
    let rel = &inner.path[outer.path.len() + 1..];
    let under: Vec<(&str, &Arc<FileData>)> = outer_files
        .iter()
        .filter_map(|(file, data)| {
            let rest = file.strip_prefix(rel)?.strip_prefix('/')?;
            Some((rest, data))
        })
        .collect();
    let same = under.len() == inner_files.len()
        && under
            .iter()
            .zip(inner_files)
            .all(|((a, x), (b, y))| *a == b.as_str() && x.digest == y.digest);
    if same {
        Ok(())
    } else {
        Err(conflict(
            "the nested skill's files differ from the enclosing skill's files in its directory",
        ))
    }
}
