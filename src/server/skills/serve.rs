//! [`Skills`]: the Skills extension on a server, built on the public extension seam
//! ([`Extension`]): its capability entry, `skills/list`, `skills/get`,
//! `resources/directory/read`, the skill files as resources, and reloading.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, Weak};

use serde::Deserialize;

use crate::error::McpError;
use crate::protocol::{CacheHints, CacheScope, ReadResourceResult, Resource};
use crate::server::extension::{Extension, ResourceSource};
use crate::server::handler::Params;
use crate::server::{Server, ServerInner};

use super::{SkillError, SkillSet};

pub use crate::protocol::skills::SKILLS_EXTENSION;

type Loader = Arc<dyn Fn() -> Result<SkillSet, SkillError> + Send + Sync>;

/// The skills a server serves, shared by the server and the application: add
/// [`extension`](Self::extension) to a [`ServerBuilder`](crate::ServerBuilder), and
/// [`reload`](Self::reload) (or [`replace`](Self::replace)) when the skills change; the servers
/// it was added to then tell their clients (`notifications/resources/list_changed`).
///
/// ```no_run
/// use actix_mcp::Server;
/// use actix_mcp::server::skills::Skills;
///
/// let skills = Skills::load("./skills")?;
/// let server = Server::builder("docs", "1.0").extension(skills.extension()).build()?;
/// // Later, after the directory changed:
/// skills.reload()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Skills {
    shared: Arc<Shared>,
}

struct Shared {
    set: RwLock<SkillSet>,
    loader: Option<Loader>,
    /// The servers it was added to, told of every change.
    servers: Mutex<Vec<Weak<ServerInner>>>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills")
            .field("set", &self.set())
            .field("reloadable", &self.shared.loader.is_some())
            .finish()
    }
}

impl Skills {
    /// Serves every skill under `dir` (see [`SkillSet::load`]); [`reload`](Self::reload) reads
    /// the directory again.
    ///
    /// # Errors
    /// The first skill refused (see [`SkillError`]).
    pub fn load(dir: impl Into<PathBuf>) -> Result<Self, SkillError> {
        let dir = dir.into();
        Self::with_loader(move || SkillSet::load(dir.clone()))
    }

    /// Serves what `loader` builds, now and on every [`reload`](Self::reload) (a directory and
    /// skills made in code together, say, with [`SkillSet::builder`]).
    ///
    /// # Errors
    /// The loader's.
    pub fn with_loader(
        loader: impl Fn() -> Result<SkillSet, SkillError> + Send + Sync + 'static,
    ) -> Result<Self, SkillError> {
        let set = loader()?;
        Ok(Self::make(set, Some(Arc::new(loader))))
    }

    /// Serves `set`; [`replace`](Self::replace) changes it.
    pub fn new(set: SkillSet) -> Self {
        Self::make(set, None)
    }

    fn make(set: SkillSet, loader: Option<Loader>) -> Self {
        Self {
            shared: Arc::new(Shared {
                set: RwLock::new(set),
                loader,
                servers: Mutex::default(),
            }),
        }
    }

    /// The skills served now (a cheap snapshot).
    pub fn set(&self) -> SkillSet {
        self.shared
            .set
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Loads the skills again (for [`load`](Self::load) and [`with_loader`](Self::with_loader);
    /// the same set otherwise) and serves them; when they load, every server this was added to
    /// sends `notifications/resources/list_changed`. On an error the skills served so far stay.
    ///
    /// # Errors
    /// The first skill refused.
    pub fn reload(&self) -> Result<(), SkillError> {
        let Some(loader) = &self.shared.loader else {
            self.announce();
            return Ok(());
        };
        let set = loader()?;
        self.replace(set);
        Ok(())
    }

    /// Serves `set` from now on, and tells the servers' clients.
    pub fn replace(&self, set: SkillSet) {
        *self
            .shared
            .set
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = set;
        self.announce();
    }

    fn announce(&self) {
        let servers: Vec<Arc<ServerInner>> = {
            let mut servers = self
                .shared
                .servers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            servers.retain(|server| server.strong_count() > 0);
            servers.iter().filter_map(Weak::upgrade).collect()
        };
        for inner in servers {
            Server { inner }.notify_resources_list_changed();
        }
    }

    /// The extension to add to a server: `io.modelcontextprotocol/skills` with
    /// `directoryRead: true`, its three methods (`skills/list` and `skills/get` cacheable for
    /// 2026-07-28 clients, 0 ms private by default), and the skill files as resources (each
    /// `SKILL.md` listed by `resources/list`, every file read by `resources/read`).
    pub fn extension(&self) -> Extension {
        let stale = CacheHints::new(0, CacheScope::Private);
        let (list, get, directory) = (self.clone(), self.clone(), self.clone());
        let bound = self.clone();
        Extension::new(SKILLS_EXTENSION)
            .setting("directoryRead", true)
            .requires_capability("resources")
            .resources(Arc::new(self.clone()))
            .cacheable("skills/list", stale)
            .cacheable("skills/get", stale)
            .method(
                "skills/list",
                move |Params(p): Params<Paged>, cx: crate::RequestContext| {
                    let set = list.set();
                    async move { set.list(p.cursor.as_deref(), cx.page_size()) }
                },
            )
            .method("skills/get", move |Params(p): Params<ByUri>| {
                let set = get.set();
                async move { set.get(&p.uri) }
            })
            .method(
                "resources/directory/read",
                move |Params(p): Params<PagedUri>, cx: crate::RequestContext| {
                    let set = directory.set();
                    async move { set.read_directory(&p.uri, p.cursor.as_deref(), cx.page_size()) }
                },
            )
            .on_bind(move |server| {
                bound
                    .shared
                    .servers
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(Arc::downgrade(server));
            })
    }
}

impl ResourceSource for Skills {
    fn list(&self) -> Vec<Resource> {
        self.set().resources()
    }

    fn read(&self, uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
        self.set().read(uri)
    }
}

/// `skills/list` params.
#[derive(Deserialize, schemars::JsonSchema)]
struct Paged {
    cursor: Option<String>,
}

/// `skills/get` params.
#[derive(Deserialize, schemars::JsonSchema)]
struct ByUri {
    uri: String,
}

/// `resources/directory/read` params.
#[derive(Deserialize, schemars::JsonSchema)]
struct PagedUri {
    uri: String,
    cursor: Option<String>,
}

impl crate::server::ServerBuilder {
    /// Serves every skill under `dir` (the Skills extension; see
    /// [`Skills`](crate::server::skills::Skills), which can also reload them): a skill the
    /// directory holds that breaks the rules fails [`build`](Self::build) with
    /// [`BuildError::Skills`](crate::BuildError::Skills).
    pub fn skills_dir(self, dir: impl Into<PathBuf>) -> Self {
        match Skills::load(dir) {
            Ok(skills) => self.extension(skills.extension()),
            Err(error) => self.refuse(crate::BuildError::Skills(error.to_string())),
        }
    }
}
