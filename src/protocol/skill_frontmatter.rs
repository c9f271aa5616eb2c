//! `SKILL.md` frontmatter and the Agent Skills naming rules.
//!
//! The format is the Agent Skills specification's (<https://agentskills.io/specification>):
//! `SKILL.md` begins with a YAML block between two `---` lines, a mapping that holds at least
//! `name` (1 to 64 characters of `a-z`, `0-9` and `-`, neither starting nor ending with `-`,
//! without `--`) and `description` (non-empty, at most 1024 characters); `compatibility`, when
//! present, is 1 to 500 characters.

use serde_json::{Map, Value};

/// The longest skill name, in characters.
pub(crate) const NAME_MAX_CHARS: usize = 64;
/// The longest description, in characters.
pub(crate) const DESCRIPTION_MAX_CHARS: usize = 1024;
/// The longest `compatibility` field, in characters.
pub(crate) const COMPATIBILITY_MAX_CHARS: usize = 500;

/// A parsed frontmatter: every field as the author wrote it, and the two required ones.
#[derive(Debug, Clone)]
pub(crate) struct Frontmatter {
    pub(crate) fields: Map<String, Value>,
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) name: String,
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) description: String,
}

/// Checks `name` against the Agent Skills naming rules; the reason it fails otherwise.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let len = name.chars().count();
    if len == 0 || len > NAME_MAX_CHARS {
        return Err(format!("must be 1 to {NAME_MAX_CHARS} characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err("may hold only lowercase letters a-z, digits and hyphens".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        return Err("must not contain consecutive hyphens".to_owned());
    }
    Ok(())
}

/// The YAML between the opening and the closing `---` lines of `text`, or why there is none.
fn yaml_block(text: &str) -> Result<&str, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end() != "---" {
        return Err("does not begin with YAML frontmatter (a `---` line)".to_owned());
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(&text[start..at]);
        }
        at += line.len();
    }
    Err("its YAML frontmatter is not closed by a `---` line".to_owned())
}

/// Parses the frontmatter of a `SKILL.md`; the reason it is refused otherwise.
pub(crate) fn parse(text: &str) -> Result<Frontmatter, String> {
    let yaml = yaml_block(text)?;
    let value: Value = serde_norway::from_str(yaml)
        .map_err(|err| format!("its frontmatter is not valid YAML: {err}"))?;
    let Value::Object(fields) = value else {
        return Err("its frontmatter is not a YAML mapping".to_owned());
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err("frontmatter `name` is not a string".to_owned()),
        None => return Err("frontmatter has no `name`".to_owned()),
    };
    check_name(&name).map_err(|reason| format!("frontmatter name {name:?} {reason}"))?;
    let description = match fields.get("description") {
        Some(Value::String(description)) => description.clone(),
        Some(_) => return Err("frontmatter `description` is not a string".to_owned()),
        None => return Err("frontmatter has no `description`".to_owned()),
    };
    if description.trim().is_empty() {
        return Err("frontmatter `description` is empty".to_owned());
    }
    if description.chars().count() > DESCRIPTION_MAX_CHARS {
        return Err(format!(
            "frontmatter `description` is longer than {DESCRIPTION_MAX_CHARS} characters"
        ));
    }
    match fields.get("compatibility") {
        None => {}
        Some(Value::String(c)) if (1..=COMPATIBILITY_MAX_CHARS).contains(&c.chars().count()) => {}
        Some(_) => {
            return Err(format!(
                "frontmatter `compatibility` is not a string of 1 to {COMPATIBILITY_MAX_CHARS} \
                 characters"
            ));
        }
    }
    Ok(Frontmatter {
        fields,
        name,
        description,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "pdf-processing", "v2", "a-b-c", &"x".repeat(64)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "PDF",
            "-a",
            "a-",
            "a--b",
            "a_b",
            "a b",
            "é",
            "a.b",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn frontmatter_is_kept_verbatim_in_order() {
        let text = "---\nname: refunds\ndescription: Refund things\nlicense: MIT\nmetadata:\n  \
                    version: \"1.0\"\n  n: 3\n---\n# Body\n";
        let parsed = parse(text).map_err(|e| e.to_string());
        let Ok(parsed) = parsed else {
            panic!("{parsed:?}");
        };
        assert_eq!(parsed.name, "refunds");
        assert_eq!(parsed.description, "Refund things");
        let keys: Vec<&str> = parsed.fields.keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "description", "license", "metadata"]);
        assert_eq!(
            Value::Object(parsed.fields),
            serde_json::json!({"name": "refunds", "description": "Refund things",
                "license": "MIT", "metadata": {"version": "1.0", "n": 3}})
        );
        assert!(parse("---\r\nname: a\r\ndescription: d\r\n---\r\n").is_ok());
    }

    #[test]
    fn bad_frontmatter_is_refused_with_a_reason() {
        let cases = [
            ("# no frontmatter\n", "does not begin"),
            ("---\nname: a\ndescription: d\n", "not closed"),
            ("---\nname: [a\n---\n", "not valid YAML"),
            ("---\n- a\n- b\n---\n", "not a YAML mapping"),
            ("---\n---\n", "not a YAML mapping"),
            ("---\ndescription: d\n---\n", "no `name`"),
            ("---\nname: 3\ndescription: d\n---\n", "not a string"),
            ("---\nname: Bad\ndescription: d\n---\n", "lowercase"),
            ("---\nname: a\n---\n", "no `description`"),
            ("---\nname: a\ndescription: \"  \"\n---\n", "empty"),
            (
                "---\nname: a\ndescription: d\ncompatibility: \"\"\n---\n",
                "compat",
            ),
        ];
        for (text, reason) in cases {
            let err = parse(text).err().unwrap_or_default();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
        let long = format!("---\nname: a\ndescription: {}\n---\n", "d".repeat(1025));
        assert!(parse(&long).is_err());
        let max = format!("---\nname: a\ndescription: {}\n---\n", "d".repeat(1024));
        assert!(parse(&max).is_ok());
    }
}
