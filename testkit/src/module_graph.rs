//! The module graph of a crate's sources, read from the files: which module refers to which
//! through `crate::`, `super::` and `self::` paths, and the cycles among sibling modules.
//!
//! Dependencies must run one way at every level of the module tree: the top-level modules of
//! a crate form a DAG, and so do the children of each module. A reference from a module into
//! its own ancestor or descendant (a child using its parent's items, a parent re-exporting a
//! child) is part of the tree, not an edge between siblings. Comments, strings and `$crate`
//! paths are ignored, and so are `#[cfg(test)]` modules: a unit test may drive a module
//! through one above it without the module depending on it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A module path from the crate root: `[]` is the root, `["db", "jobs"]` is `crate::db::jobs`.
pub type ModPath = Vec<String>;

/// One reference from a module to another, where it was written.
#[derive(Clone, Debug)]
pub struct Reference {
    pub from: ModPath,
    pub to: ModPath,
    pub file: PathBuf,
    pub line: usize,
}

/// A crate's module tree (file and inline modules) and the references between its modules.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Every module, with the file that holds it.
    pub modules: BTreeMap<ModPath, PathBuf>,
    pub references: Vec<Reference>,
}

/// A cycle among the children of `parent`: `members` each reach the next, with an example
/// reference for every edge of the cycle.
#[derive(Debug)]
pub struct Cycle {
    pub root_file: PathBuf,
    /// Every module of the strongly connected component.
    pub component: Vec<String>,
    pub parent: ModPath,
    pub members: Vec<String>,
    pub examples: Vec<Reference>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parent =
            if self.parent.is_empty() { "crate".to_owned() } else { format!("crate::{}", self.parent.join("::")) };
        writeln!(
            f,
            "{}: modules of {parent} that depend on each other: {}; one cycle: {}",
            self.root_file.display(),
            self.component.join(", "),
            self.members.join(" -> ")
        )?;
        for r in &self.examples {
            writeln!(
                f,
                "    {}:{}: crate::{} uses crate::{}",
                r.file.display(),
                r.line,
                r.from.join("::"),
                r.to.join("::")
            )?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("{}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
    #[error("{}: `mod {name};` names no file", .file.display())]
    MissingModule { file: PathBuf, name: String },
    #[error("{}: no `members = [...]` list", .0.display())]
    NoMembers(PathBuf),
}

/// The crate roots of every member of the workspace whose root manifest is in `workspace`:
/// `src/lib.rs`, `src/main.rs`, `src/bin/*`, and the integration tests and benches.
pub fn workspace_crate_roots(workspace: &Path) -> Result<Vec<PathBuf>, GraphError> {
    let manifest = workspace.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| GraphError::Io(manifest.clone(), e))?;
    let list = text
        .split_once("members")
        .and_then(|(_, rest)| rest.split_once('['))
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .ok_or_else(|| GraphError::NoMembers(manifest.clone()))?;
    let members = list.split(',').map(|m| m.trim().trim_matches('"')).filter(|m| !m.is_empty());
    let mut roots = Vec::new();
    for member in members {
        let dir = workspace.join(member);
        roots.extend(["src/lib.rs", "src/main.rs"].iter().map(|f| dir.join(f)).filter(|p| p.is_file()));
        for (folder, nested) in [("src/bin", "main.rs"), ("tests", "main.rs"), ("benches", "main.rs")] {
            let Ok(entries) = std::fs::read_dir(dir.join(folder)) else { continue };
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter_map(|p| match p.extension() {
                    Some(ext) if ext == "rs" => Some(p),
                    _ if p.join(nested).is_file() => Some(p.join(nested)),
                    _ => None,
                })
                .collect();
            found.sort();
            roots.extend(found);
        }
    }
    Ok(roots)
}

impl ModuleGraph {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`, a bin or a test).
    pub fn read(root: &Path) -> Result<ModuleGraph, GraphError> {
        let mut graph = ModuleGraph::default();
        let mut pending = vec![(Vec::new(), root.to_path_buf(), true)];
        while let Some((path, file, owns_dir)) = pending.pop() {
            let text = std::fs::read_to_string(&file).map_err(|e| GraphError::Io(file.clone(), e))?;
            let source = Source::scan(&text);
            graph.modules.insert(path.clone(), file.clone());
            let dir =
                if owns_dir { file.parent().unwrap_or(Path::new("")).to_path_buf() } else { file.with_extension("") };
            for decl in source.file_modules() {
                let child_path = [path.clone(), decl.inline_path.clone(), vec![decl.name.clone()]].concat();
                let base = decl.inline_path.iter().fold(dir.clone(), |d, m| d.join(m));
                let found = match &decl.path_attr {
                    // Relative to the declaring file's directory, or (inside inline modules)
                    // to the directory those modules would own.
                    Some(p) => {
                        let parent = file.parent().unwrap_or(Path::new(""));
                        let p = if decl.inline_path.is_empty() { parent.join(p) } else { base.join(p) };
                        Some((p, true))
                    }
                    None => {
                        let flat = base.join(format!("{}.rs", decl.name));
                        let nested = base.join(&decl.name).join("mod.rs");
                        if flat.is_file() {
                            Some((flat, false))
                        } else if nested.is_file() {
                            Some((nested, true))
                        } else {
                            None
                        }
                    }
                };
                let Some((child_file, child_owns_dir)) = found else {
                    return Err(GraphError::MissingModule { file: file.clone(), name: decl.name });
                };
                pending.push((child_path, child_file, child_owns_dir));
            }
            for inline in source.inline_modules() {
                graph.modules.insert([path.clone(), inline].concat(), file.clone());
            }
            for (inline_path, line, segments) in source.paths() {
                let here = [path.clone(), inline_path].concat();
                if let Some(to) = resolve(&here, &segments) {
                    graph.references.push(Reference { from: here, to, file: file.clone(), line });
                }
            }
        }
        // A path names the deepest module it reaches; the rest are items.
        let modules = &graph.modules;
        for r in &mut graph.references {
            while !r.to.is_empty() && !modules.contains_key(&r.to) {
                r.to.pop();
            }
        }
        Ok(graph)
    }

    /// Cycles among siblings, at every level of the tree.
    pub fn cycles(&self, root_file: &Path) -> Vec<Cycle> {
        // parent -> (child -> child -> example reference)
        let mut levels: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, Reference>>> = BTreeMap::new();
        for r in &self.references {
            let common = r.from.iter().zip(&r.to).take_while(|(a, b)| a == b).count();
            if common == r.from.len() || common == r.to.len() {
                continue; // ancestor or descendant
            }
            let parent = r.from[..common].to_vec();
            levels
                .entry(parent)
                .or_default()
                .entry(r.from[common].clone())
                .or_default()
                .entry(r.to[common].clone())
                .or_insert_with(|| r.clone());
        }
        let mut cycles = Vec::new();
        for (parent, edges) in &levels {
            for component in strongly_connected(edges) {
                if component.len() < 2 {
                    continue;
                }
                let members = cycle_through(edges, &component);
                let examples = members.windows(2).map(|w| edges[&w[0]][&w[1]].clone()).collect::<Vec<_>>();
                cycles.push(Cycle {
                    root_file: root_file.to_path_buf(),
                    component: component.clone(),
                    parent: parent.clone(),
                    members,
                    examples,
                });
            }
        }
        cycles
    }
}

/// The module a path starting with `crate`, `super` or `self` names, before trimming items.
fn resolve(here: &[String], segments: &[String]) -> Option<ModPath> {
    let mut at: ModPath = match segments.first()?.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => here.to_vec(),
        _ => return None,
    };
    let mut rest = &segments[usize::from(segments[0] == "crate")..];
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                at.pop()?;
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// Tarjan's strongly connected components over `edges` (deterministic order).
fn strongly_connected(edges: &BTreeMap<String, BTreeMap<String, Reference>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, Reference>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: std::collections::BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next.keys() {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let lw = s.low[w.as_str()];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(lw));
                } else if s.on_stack.contains(w.as_str()) {
                    let iw = s.index[w.as_str()];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(iw));
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: Default::default(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// One closed walk through a strongly connected component, starting and ending at its first
/// member: a shortest path there and back (breadth-first), so the report names real edges.
fn cycle_through(edges: &BTreeMap<String, BTreeMap<String, Reference>>, component: &[String]) -> Vec<String> {
    let inside = |n: &str| component.iter().any(|c| c == n);
    let start = &component[0];
    // Breadth-first from start's successors back to start.
    let mut prev: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::new();
    for w in edges.get(start).into_iter().flat_map(|m| m.keys()).filter(|w| inside(w)) {
        if !prev.contains_key(w) {
            prev.insert(w.clone(), start.clone());
            queue.push_back(w.clone());
        }
    }
    while let Some(v) = queue.pop_front() {
        if &v == start {
            break;
        }
        for w in edges.get(&v).into_iter().flat_map(|m| m.keys()).filter(|w| inside(w)) {
            if !prev.contains_key(w) {
                prev.insert(w.clone(), v.clone());
                queue.push_back(w.clone());
            }
        }
    }
    let mut walk = vec![start.clone()];
    let mut at = prev.get(start).cloned();
    while let Some(v) = at {
        walk.push(v.clone());
        if &v == start {
            break;
        }
        at = prev.get(&v).cloned();
    }
    walk.reverse();
    walk
}

/// A `mod name;` declaration (possibly inside inline modules), with its `#[path]`.
struct FileModule {
    inline_path: Vec<String>,
    name: String,
    path_attr: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Hash,
    Str(String),
    Other(char),
}

/// A file's tokens with their lines, comments dropped, string contents kept only as tokens.
struct Source {
    tokens: Vec<(Token, usize)>,
}

impl Source {
    fn scan(text: &str) -> Source {
        let chars: Vec<char> = text.chars().collect();
        let mut tokens = Vec::new();
        let mut line = 1;
        let mut i = 0;
        let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
        while i < chars.len() {
            let c = chars[i];
            if c == '\n' {
                line += 1;
                i += 1;
            } else if c.is_whitespace() {
                i += 1;
            } else if c == '/' && at(i + 1) == '/' {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            } else if c == '/' && at(i + 1) == '*' {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            } else if c == '"' || ((c == 'r' || c == 'b') && raw_or_byte_string_start(&chars, i)) {
                let start_line = line;
                let (content, end) = string_literal(&chars, i, &mut line);
                tokens.push((Token::Str(content), start_line));
                i = end;
            } else if c == '\'' {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                if at(i + 1) == '\\' {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    i += 1;
                }
            } else if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if start > 0 && chars[start - 1] == '$' {
                    tokens.push((Token::Other('$'), line)); // `$crate` is a macro's own path
                } else {
                    tokens.push((Token::Ident(word), line));
                }
            } else if c == ':' && at(i + 1) == ':' {
                tokens.push((Token::PathSep, line));
                i += 2;
            } else {
                tokens.push((
                    match c {
                        '{' => Token::Open,
                        '}' => Token::Close,
                        ';' => Token::Semi,
                        ',' => Token::Comma,
                        '#' => Token::Hash,
                        other => Token::Other(other),
                    },
                    line,
                ));
                i += 1;
            }
        }
        Source { tokens }
    }

    fn ident(&self, i: usize) -> Option<&str> {
        match self.tokens.get(i) {
            Some((Token::Ident(s), _)) => Some(s),
            _ => None,
        }
    }

    fn is(&self, i: usize, t: &Token) -> bool {
        self.tokens.get(i).is_some_and(|(x, _)| x == t)
    }

    /// For each token, the inline modules (`mod name { .. }`) it sits in, and whether one of
    /// them is `#[cfg(test)]`.
    fn scopes(&self) -> Vec<(Vec<String>, bool)> {
        let mut scopes: Vec<(Vec<String>, bool)> = Vec::with_capacity(self.tokens.len());
        // (name, brace depth inside it, test-only)
        let mut stack: Vec<(String, usize, bool)> = Vec::new();
        let mut depth = 0usize;
        let mut i = 0;
        while i < self.tokens.len() {
            let here = (stack.iter().map(|(n, _, _)| n.clone()).collect(), stack.iter().any(|(_, _, t)| *t));
            match &self.tokens[i].0 {
                Token::Ident(k) if k == "mod" && self.is(i + 2, &Token::Open) && self.ident(i + 1).is_some() => {
                    let name = self.ident(i + 1).unwrap_or_default().to_owned();
                    let test = self.test_only(i);
                    scopes.extend([here.clone(), here.clone(), here]);
                    depth += 1;
                    stack.push((name, depth, test));
                    i += 3;
                    continue;
                }
                Token::Open => depth += 1,
                Token::Close => {
                    if stack.last().is_some_and(|(_, d, _)| *d == depth) {
                        stack.pop();
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            scopes.push(here);
            i += 1;
        }
        scopes
    }

    fn inline_modules(&self) -> Vec<Vec<String>> {
        let mut all: Vec<Vec<String>> =
            self.scopes().into_iter().filter(|(s, test)| !s.is_empty() && !test).map(|(s, _)| s).collect();
        all.sort();
        all.dedup();
        // Every prefix is a module too.
        let mut with_prefixes = Vec::new();
        for s in all {
            for n in 1..=s.len() {
                with_prefixes.push(s[..n].to_vec());
            }
        }
        with_prefixes.sort();
        with_prefixes.dedup();
        with_prefixes
    }

    /// `mod name;` declarations, with a preceding `#[path = ".."]`.
    fn file_modules(&self) -> Vec<FileModule> {
        let mut out = Vec::new();
        for (i, (inline_path, in_test)) in self.scopes().into_iter().enumerate() {
            if self.ident(i) == Some("mod") && self.is(i + 2, &Token::Semi) && !in_test && !self.test_only(i) {
                let Some(name) = self.ident(i + 1) else { continue };
                let path_attr = self.path_attribute_before(i);
                out.push(FileModule { inline_path, name: name.to_owned(), path_attr });
            }
        }
        out
    }

    /// Whether `#[cfg(test)]` is among the attributes right before token `i`.
    fn test_only(&self, i: usize) -> bool {
        self.attributes_before(i).iter().any(|&k| {
            self.ident(k + 1) == Some("cfg")
                && self.is(k + 2, &Token::Other('('))
                && self.ident(k + 3) == Some("test")
                && self.is(k + 4, &Token::Other(')'))
        })
    }

    /// The `#[path = "x"]` among the attributes right before token `i`.
    fn path_attribute_before(&self, i: usize) -> Option<String> {
        self.attributes_before(i).into_iter().find_map(|k| {
            if self.ident(k + 1) == Some("path") && self.is(k + 2, &Token::Other('=')) {
                if let Some((Token::Str(s), _)) = self.tokens.get(k + 3) {
                    return Some(s.clone());
                }
            }
            None
        })
    }

    /// The `[` of each attribute right before the item at token `i` (skipping its visibility).
    fn attributes_before(&self, i: usize) -> Vec<usize> {
        let mut found = Vec::new();
        let mut j = i;
        // Skip visibility.
        while j > 0 {
            match &self.tokens[j - 1].0 {
                Token::Ident(w) if w == "pub" || w == "crate" || w == "super" || w == "in" => j -= 1,
                Token::Other('(') | Token::Other(')') => j -= 1,
                _ => break,
            }
        }
        // Attributes: `# [ ... ]` blocks, read backwards.
        while j > 0 && self.is(j - 1, &Token::Other(']')) {
            let mut k = j - 1;
            while k > 0 && !self.is(k, &Token::Other('[')) {
                k -= 1;
            }
            if k == 0 || !self.is(k - 1, &Token::Hash) {
                break;
            }
            found.push(k);
            j = k - 1;
        }
        found
    }

    /// Every path that starts with `crate`, `super` or `self`, with `use` groups expanded: the
    /// inline modules it sits in, its line and its segments.
    fn paths(&self) -> Vec<(Vec<String>, usize, Vec<String>)> {
        let scopes = self.scopes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.tokens.len() {
            let starts = !scopes[i].1
                && matches!(self.ident(i), Some("crate" | "super" | "self"))
                && self.is(i + 1, &Token::PathSep)
                && !(i > 0 && self.is(i - 1, &Token::PathSep));
            if !starts {
                i += 1;
                continue;
            }
            let line = self.tokens[i].1;
            let mut found = Vec::new();
            let end = self.expand(i, Vec::new(), &mut found);
            for segments in found {
                out.push((scopes[i].0.clone(), line, segments));
            }
            i = end.max(i + 1);
        }
        out
    }

    /// Reads the path at `i` (after `prefix`), expanding `{a, b::c}` groups into `found`;
    /// returns the index after it.
    fn expand(&self, mut i: usize, mut prefix: Vec<String>, found: &mut Vec<Vec<String>>) -> usize {
        loop {
            match self.tokens.get(i).map(|t| &t.0) {
                Some(Token::Ident(w)) if w != "as" => {
                    prefix.push(w.clone());
                    i += 1;
                }
                Some(Token::Other('*')) => {
                    i += 1;
                    break;
                }
                Some(Token::Open) if !prefix.is_empty() => {
                    i += 1;
                    loop {
                        match self.tokens.get(i).map(|t| &t.0) {
                            Some(Token::Close) => {
                                i += 1;
                                break;
                            }
                            Some(Token::Comma) => i += 1,
                            None => break,
                            _ => {
                                let next = self.expand(i, prefix.clone(), found);
                                // `as name` renames, `self` names the prefix itself.
                                i = next;
                                if self.ident(i) == Some("as") {
                                    i += 2;
                                }
                            }
                        }
                    }
                    return i;
                }
                _ => break,
            }
            if self.is(i, &Token::PathSep) {
                i += 1;
            } else {
                break;
            }
        }
        if prefix.last().is_some_and(|s| s == "self") && prefix.len() > 1 {
            prefix.pop();
        }
        if !prefix.is_empty() {
            found.push(prefix);
        }
        i
    }
}

fn raw_or_byte_string_start(chars: &[char], i: usize) -> bool {
    // Not part of an identifier.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) == Some(&'r') {
        j += 1;
        while chars.get(j) == Some(&'#') {
            j += 1;
        }
    }
    j > i && chars.get(j) == Some(&'"')
}

/// Reads a string literal at `i` ("..", b"..", r#".."#); returns its content and the index after.
fn string_literal(chars: &[char], mut i: usize, line: &mut usize) -> (String, usize) {
    if chars[i] == 'b' {
        i += 1;
    }
    let mut hashes = None;
    if chars[i] == 'r' {
        i += 1;
        let mut n = 0;
        while chars[i] == '#' {
            n += 1;
            i += 1;
        }
        hashes = Some(n);
    }
    i += 1; // opening quote
    let mut content = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            *line += 1;
        }
        match hashes {
            None if c == '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    if n == '\n' {
                        *line += 1;
                    }
                    content.push(n);
                }
                i += 2;
                continue;
            }
            None if c == '"' => return (content, i + 1),
            Some(n) if c == '"' && (1..=n).all(|k| chars.get(i + k) == Some(&'#')) => return (content, i + 1 + n),
            _ => {}
        }
        content.push(c);
        i += 1;
    }
    (content, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (path, text) under a new directory and reads the crate rooted at `lib.rs`.
    fn crate_of(files: &[(&str, &str)]) -> (tempfile::TempDir, ModuleGraph) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let graph = ModuleGraph::read(&dir.path().join("lib.rs")).unwrap();
        (dir, graph)
    }

    fn cycles(files: &[(&str, &str)]) -> Vec<String> {
        let (dir, graph) = crate_of(files);
        graph.cycles(&dir.path().join("lib.rs")).iter().map(|c| c.members.join(" -> ")).collect()
    }

    #[test]
    fn finds_a_cycle_between_siblings_with_the_references_that_make_it() {
        let (dir, graph) = crate_of(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;"),
            ("a.rs", "use crate::b::Thing;"),
            ("b.rs", "pub struct Thing;\nfn f() { crate::c::g() }"),
            ("c.rs", "pub fn g() { let _ = super::a::X; }"),
        ]);
        let found = graph.cycles(&dir.path().join("lib.rs"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].component, ["a", "b", "c"]);
        assert_eq!(found[0].members, ["a", "b", "c", "a"]);
        let lines: Vec<_> = found[0].examples.iter().map(|r| (r.from.join("::"), r.line)).collect();
        assert_eq!(lines, [("a".to_owned(), 1), ("b".to_owned(), 2), ("c".to_owned(), 1)]);
        assert!(found[0].to_string().contains("a -> b -> c -> a"), "{}", found[0]);
    }

    #[test]
    fn a_layered_crate_has_no_cycle() {
        assert!(cycles(&[
            ("lib.rs", "mod a;\nmod b;"),
            ("a.rs", "use crate::b;\nuse crate::{b::{self, X}, b::Y};"),
            ("b.rs", "pub struct X; pub struct Y;"),
        ])
        .is_empty());
    }

    #[test]
    fn parents_and_children_may_use_each_other() {
        assert!(cycles(&[
            ("lib.rs", "pub mod net;"),
            ("net/mod.rs", "mod conn;\nmod frame;\npub use conn::Conn;\npub struct Config;"),
            ("net/conn.rs", "use super::Config;\nuse super::frame::Frame;\npub struct Conn;"),
            ("net/frame.rs", "use super::super::net::Config;\npub struct Frame;"),
        ])
        .is_empty());
    }

    #[test]
    fn finds_cycles_among_the_children_of_a_module() {
        let found = cycles(&[
            ("lib.rs", "pub mod net;"),
            ("net/mod.rs", "mod conn;\nmod frame;"),
            ("net/conn.rs", "use super::frame::Frame;\npub struct Conn;"),
            ("net/frame.rs", "use crate::net::conn::Conn;\npub struct Frame;"),
        ]);
        assert_eq!(found, ["conn -> frame -> conn"]);
    }

    #[test]
    fn comments_strings_macros_own_paths_and_test_modules_are_not_references() {
        assert!(cycles(&[
            ("lib.rs", "mod a;\nmod b;"),
            ("a.rs", "use crate::b::X;"),
            (
                "b.rs",
                r##"pub struct X;
// crate::a::Y
/* crate::a::Y /* nested */ crate::a::Y */
const S: &str = "crate::a::Y";
const R: &str = r#"crate::a::Y"#;
const C: char = '{';
macro_rules! m { () => { $crate::a::Y } }
#[cfg(test)]
mod tests { use crate::a::Y; }
#[cfg(test)]
mod more;
fn f<'a>(x: &'a str) -> &'a str { x }"##,
            ),
        ])
        .is_empty());
    }

    #[test]
    fn path_attributes_and_inline_modules_resolve_their_files() {
        let (_dir, graph) = crate_of(&[
            ("lib.rs", "#[path = \"other/place.rs\"]\npub mod moved;\npub mod outer { pub mod inner; }"),
            ("other/place.rs", "pub struct P;"),
            ("outer/inner.rs", "use crate::moved::P;"),
        ]);
        let names: Vec<String> = graph.modules.keys().map(|m| m.join("::")).collect();
        assert_eq!(names, ["", "moved", "outer", "outer::inner"]);
        assert_eq!(graph.references.len(), 1);
        assert_eq!(graph.references[0].to, ["moved"]);
    }

    #[test]
    fn a_declared_module_without_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lib.rs"), "mod gone;").unwrap();
        let e = ModuleGraph::read(&dir.path().join("lib.rs")).unwrap_err();
        assert!(e.to_string().contains("`mod gone;` names no file"), "{e}");
    }

    /// The check the issue asked for: no crate of this workspace has a module cycle. When it
    /// fails it names the modules and, for each edge of one cycle, the line that makes it.
    #[test]
    fn no_module_cycle_in_any_crate_of_the_workspace() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
        let roots = workspace_crate_roots(workspace).unwrap();
        assert!(roots.iter().any(|r| r.ends_with("api/src/lib.rs")), "{roots:?}");
        let mut report = String::new();
        for root in &roots {
            let graph = ModuleGraph::read(root).unwrap();
            for cycle in graph.cycles(root.strip_prefix(workspace).unwrap_or(root)) {
                report.push_str(&cycle.to_string());
            }
        }
        assert!(report.is_empty(), "module cycles (make the dependencies run one way):\n{report}");
    }
}
