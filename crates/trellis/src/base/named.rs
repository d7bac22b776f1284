//! Choices a person names by a word: a linkage method, a query strategy, an
//! initial tree of A*, the heights of a dendrogram.
//!
//! Every door spells them alike (a command-line flag, a Python string, a
//! JSON field) because every door reads them from one table per enum,
//! [`Named::CHOICES`]: its names, in the order they are listed, each with a
//! line of help. The command line builds its `--help` and its "possible
//! values" from the same table; Python's functions parse their string
//! arguments with [`Named::parse`], whose refusal lists the names.

use crate::error::{Error, Result};

/// An enum whose values a person chooses by name (see the module docs).
pub trait Named: Copy + PartialEq + Send + Sync + 'static {
    /// What is chosen, for messages: "linkage method".
    const WHAT: &'static str;

    /// Every value: its name (lower case) and one line of help for people.
    const CHOICES: &'static [(&'static str, Self, &'static str)];

    /// The value's name.
    fn name(self) -> &'static str {
        Self::CHOICES
            .iter()
            .find(|c| c.1 == self)
            .map_or("?", |c| c.0)
    }

    /// The value named `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES.iter().find(|c| c.0 == name).map(|c| c.1)
    }

    /// The value named `name`.
    ///
    /// # Errors
    ///
    /// No value has that name; the message lists the names.
    fn parse(name: &str) -> Result<Self> {
        Self::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Self::CHOICES.iter().map(|c| c.0).collect();
            Error::input(format!(
                "unknown {} {name:?}: one of {}",
                Self::WHAT,
                names.join(", ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    impl Named for Colour {
        const WHAT: &'static str = "colour";
        const CHOICES: &'static [(&'static str, Colour, &'static str)] =
            &[("red", Colour::Red, "warm"), ("blue", Colour::Blue, "cold")];
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_listed() {
        for &(name, value, _) in Colour::CHOICES {
            assert_eq!(value.name(), name);
            assert_eq!(Colour::parse(name).unwrap(), value);
        }
        let e = Colour::parse("green").unwrap_err().to_string();
        assert_eq!(e, "unknown colour \"green\": one of red, blue");
        assert_eq!(Colour::from_name("Red"), None);
    }
}
