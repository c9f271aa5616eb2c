//! Loading a skill directory into checked [`SkillRecord`]s, every file read into memory.
//!
//! The walk follows symbolic links only when they resolve inside the root, refuses a link back
//! to a directory on its own path (a loop), skips names starting with `.` and anything that is
//! neither a file nor a directory (sockets, FIFOs), and refuses names that are not UTF-8.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    Content, FileData, MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SkillError, SkillRecord, uri,
};

/// The most entries a walk visits before giving up (links inside the root can multiply them).
const MAX_WALK_ENTRIES: usize = 1_000_000;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SkillError + '_ {
    move |source| SkillError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A file found by the walk: where its bytes are and how long it claims to be.
struct Found {
    real: PathBuf,
    len: u64,
}

struct Walk {
    root: PathBuf,
    /// Path relative to the root → file.
    files: BTreeMap<String, Found>,
    /// Paths relative to the root of the directories holding a `SKILL.md`.
    skills: Vec<String>,
    entries: usize,
}

impl Walk {
    /// Walks `real` (canonical), shown to the user as `shown`, at `rel` under the root.
    fn dir(
        &mut self,
        real: &Path,
        shown: &Path,
        rel: &str,
        ancestors: &mut Vec<PathBuf>,
    ) -> Result<(), SkillError> {
        let mut children = Vec::new();
        for entry in fs::read_dir(real).map_err(io(shown))? {
            let entry = entry.map_err(io(shown))?;
            children.push(entry);
        }
        children.sort_by_key(|entry| entry.file_name());
        for entry in children {
            let shown = shown.join(entry.file_name());
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(SkillError::InvalidPath {
                    path: shown.display().to_string(),
                    reason: "the name is not UTF-8".to_owned(),
                });
            };
            if name.starts_with('.') {
                continue;
            }
            uri::check_segment(&name).map_err(|reason| SkillError::InvalidPath {
                path: shown.display().to_string(),
                reason,
            })?;
            self.entries += 1;
            if self.entries > MAX_WALK_ENTRIES {
                return Err(SkillError::InvalidPath {
                    path: self.root.display().to_string(),
                    reason: format!("more than {MAX_WALK_ENTRIES} entries under the root"),
                });
            }
            let file_type = entry.file_type().map_err(io(&shown))?;
            let child_real = if file_type.is_symlink() {
                let target = fs::canonicalize(entry.path()).map_err(|source| {
                    if source.raw_os_error() == Some(ELOOP) {
                        SkillError::SymlinkLoop {
                            path: shown.display().to_string(),
                        }
                    } else {
                        io(&shown)(source)
                    }
                })?;
                if !target.starts_with(&self.root) {
                    return Err(SkillError::SymlinkEscape {
                        path: shown.display().to_string(),
                        target: target.display().to_string(),
                    });
                }
                target
            } else {
                real.join(&name)
            };
            let meta = fs::metadata(&child_real).map_err(io(&shown))?;
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if meta.is_dir() {
                if ancestors.contains(&child_real) {
                    return Err(SkillError::SymlinkLoop {
                        path: shown.display().to_string(),
                    });
                }
                ancestors.push(child_real.clone());
                self.dir(&child_real, &shown, &child_rel, ancestors)?;
                ancestors.pop();
            } else if meta.is_file() {
                if name == "SKILL.md" {
                    if rel.is_empty() {
                        return Err(SkillError::InvalidPath {
                            path: shown.display().to_string(),
                            reason: "the root itself cannot be a skill; its skills are its \
                                     subdirectories"
                                .to_owned(),
                        });
                    }
                    self.skills.push(rel.to_owned());
                }
                self.files.insert(
                    child_rel,
                    Found {
                        real: child_real,
                        len: meta.len(),
                    },
                );
            }
        }
        Ok(())
    }
}

/// `ELOOP`, the error of resolving a link loop (the same number on Linux and the BSDs is not
/// guaranteed, so it is only a better message; any other failure is still an error).
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;
#[cfg(not(target_os = "linux"))]
const ELOOP: i32 = 62;

/// Loads every skill under `root`.
pub(crate) fn load_dir(root: &Path) -> Result<Vec<SkillRecord>, SkillError> {
    let meta = fs::metadata(root).map_err(io(root))?;
    if !meta.is_dir() {
        return Err(SkillError::NotADirectory {
            path: root.display().to_string(),
        });
    }
    let real_root = fs::canonicalize(root).map_err(io(root))?;
    let mut walk = Walk {
        root: real_root.clone(),
        files: BTreeMap::new(),
        skills: Vec::new(),
        entries: 0,
    };
    walk.dir(&real_root, root, "", &mut vec![real_root.clone()])?;
    let mut read: HashMap<String, Arc<FileData>> = HashMap::new();
    let mut records = Vec::with_capacity(walk.skills.len());
    for skill in &walk.skills {
        let shown = root.join(skill).display().to_string();
        let prefix = format!("{skill}/");
        let found: Vec<(&str, &str, &Found)> = walk
            .files
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .map(|(path, found)| (path.as_str(), &path[prefix.len()..], found))
            .collect();
        // Checked on the sizes the filesystem reports before anything is read.
        let claimed: u64 = found.iter().map(|(_, _, f)| f.len).sum();
        if found.len() > MAX_FILES_PER_SKILL || claimed > MAX_BYTES_PER_SKILL {
            return Err(SkillError::TooLarge {
                path: shown,
                files: found.len(),
                bytes: claimed,
            });
        }
        let mut files = BTreeMap::new();
        for (full, file, at) in found {
            let data = match read.get(full) {
                Some(data) => data.clone(),
                None => {
                    let data = FileData::new(fs::read(&at.real).map_err(io(&root.join(full)))?);
                    read.insert(full.to_owned(), data.clone());
                    data
                }
            };
            files.insert(file.to_owned(), data);
        }
        records.push(SkillRecord::new(
            &shown,
            skill.clone(),
            Content::Files(files),
        )?);
    }
    Ok(records)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::SkillSet;
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A directory under the system's temporary directory, removed when dropped.
    pub(crate) struct TempTree(pub(crate) PathBuf);

    impl TempTree {
        pub(crate) fn new(tag: &str) -> Self {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("actix-mcp-skills-{}-{tag}-{n}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
            Self(dir)
        }

        pub(crate) fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Self {
            let path = self.0.join(rel);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
            }
            fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
            self
        }

        pub(crate) fn skill(&self, path: &str) -> &Self {
            let name = path.rsplit('/').next().unwrap_or(path);
            self.write(
                &format!("{path}/SKILL.md"),
                format!("---\nname: {name}\ndescription: The {name} skill\n---\n# {name}\n"),
            )
        }
    }

    impl Drop for TempTree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn refusal(tree: &TempTree) -> String {
        match SkillSet::load(&tree.0) {
            Ok(set) => panic!("loaded: {set:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn loads_skills_and_skips_hidden_and_stray_files() {
        let tree = TempTree::new("basic");
        tree.skill("one")
            .write("one/.secret", "hidden")
            .write("one/.git/config", "hidden")
            .write("README.md", "not a skill")
            .write("acme/notes.txt", "outside every skill")
            .skill("acme/billing/refunds");
        let set = SkillSet::load(&tree.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            set.skill_uris(),
            [
                "skill://acme/billing/refunds/SKILL.md",
                "skill://one/SKILL.md"
            ]
        );
        let files: Vec<&String> = set.index.files.keys().collect();
        assert_eq!(files.len(), 2, "{files:?}");
    }

    #[test]
    fn bad_skill_md_is_refused_naming_the_skill() {
        let cases: [(&str, &str); 9] = [
            ("# no frontmatter\n", "does not begin"),
            ("---\nname: [x\n---\n", "not valid YAML"),
            ("---\njust text\n---\n", "not a YAML mapping"),
            ("---\ndescription: d\n---\n", "no `name`"),
            ("---\nname: bad\n---\n", "no `description`"),
            (
                "---\nname: other\ndescription: d\n---\n",
                "its frontmatter name is \"other\"",
            ),
            ("---\nname: bad\ndescription: \"\"\n---\n", "empty"),
            ("---\nname: bad\ndescription: 5\n---\n", "not a string"),
            (
                "---\nname: [1]\ndescription: d\n---\n",
                "`name` is not a string",
            ),
        ];
        for (text, reason) in cases {
            let tree = TempTree::new("badmd");
            tree.write("bad/SKILL.md", text);
            let err = refusal(&tree);
            assert!(err.contains(reason), "{text:?}: {err}");
            assert!(
                err.contains(&tree.0.join("bad").display().to_string()),
                "{err}"
            );
        }
        let tree = TempTree::new("notutf8");
        tree.write("bad/SKILL.md", b"---\nname: bad\xff\n---\n");
        assert!(refusal(&tree).contains("not UTF-8"));
    }

    #[test]
    fn names_outside_the_rules_are_refused() {
        for name in ["Bad", "bad--name", "-bad", "bad_name"] {
            let tree = TempTree::new("badname");
            tree.write(
                &format!("{name}/SKILL.md"),
                format!("---\nname: {name}\ndescription: d\n---\n"),
            );
            let err = refusal(&tree);
            assert!(
                err.contains("invalid SKILL.md") && err.contains(name),
                "{err}"
            );
        }
    }

    #[test]
    fn skills_past_the_limits_are_refused() {
        let tree = TempTree::new("manyfiles");
        tree.skill("many");
        for i in 0..MAX_FILES_PER_SKILL {
            tree.write(&format!("many/f/{i}.txt"), "x");
        }
        let err = refusal(&tree);
        assert!(err.contains("513 files"), "{err}");

        let tree = TempTree::new("bigfiles");
        tree.skill("big");
        let file = fs::File::create(tree.0.join("big/blob.bin")).unwrap_or_else(|e| panic!("{e}"));
        file.set_len(MAX_BYTES_PER_SKILL)
            .unwrap_or_else(|e| panic!("{e}"));
        let err = refusal(&tree);
        assert!(err.contains("past the limits"), "{err}");

        let tree = TempTree::new("atlimit");
        tree.skill("full");
        for i in 0..MAX_FILES_PER_SKILL - 1 {
            tree.write(&format!("full/f/{i}.txt"), "x");
        }
        assert!(SkillSet::load(&tree.0).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_the_root_are_followed_and_others_refused() {
        use std::os::unix::fs::symlink;
        let tree = TempTree::new("links");
        tree.skill("one").write("shared/data.txt", "shared");
        symlink(tree.0.join("shared/data.txt"), tree.0.join("one/data.txt"))
            .unwrap_or_else(|e| panic!("{e}"));
        symlink(tree.0.join("shared"), tree.0.join("one/more")).unwrap_or_else(|e| panic!("{e}"));
        let set = SkillSet::load(&tree.0).unwrap_or_else(|e| panic!("{e}"));
        assert!(set.index.files.contains_key("one/data.txt"));
        assert!(set.index.files.contains_key("one/more/data.txt"));

        let outside = TempTree::new("outside");
        outside.write("passwd", "root:x:0:0");
        let tree = TempTree::new("escape");
        tree.skill("one");
        symlink(outside.0.join("passwd"), tree.0.join("one/passwd"))
            .unwrap_or_else(|e| panic!("{e}"));
        let err = refusal(&tree);
        assert!(
            err.contains("outside the root") && err.contains("one/passwd"),
            "{err}"
        );

        let tree = TempTree::new("escapedir");
        tree.skill("one");
        symlink("/etc", tree.0.join("one/etc")).unwrap_or_else(|e| panic!("{e}"));
        assert!(refusal(&tree).contains("outside the root"));

        let tree = TempTree::new("loop");
        tree.skill("one");
        symlink(tree.0.join("one"), tree.0.join("one/again")).unwrap_or_else(|e| panic!("{e}"));
        let err = refusal(&tree);
        assert!(err.contains("symbolic link loop"), "{err}");

        let tree = TempTree::new("selfloop");
        tree.skill("one");
        symlink(tree.0.join("one/a"), tree.0.join("one/b")).unwrap_or_else(|e| panic!("{e}"));
        symlink(tree.0.join("one/b"), tree.0.join("one/a")).unwrap_or_else(|e| panic!("{e}"));
        assert!(refusal(&tree).contains("symbolic link loop"));
    }

    #[test]
    fn the_root_must_be_a_directory_without_its_own_skill_md() {
        let tree = TempTree::new("rootfile");
        tree.write("file.txt", "x");
        let err = SkillSet::load(tree.0.join("file.txt"))
            .err()
            .map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("not a directory"));
        assert!(SkillSet::load(tree.0.join("missing")).is_err());
        tree.write("SKILL.md", "---\nname: x\ndescription: d\n---\n");
        assert!(refusal(&tree).contains("the root itself"));
    }
}
