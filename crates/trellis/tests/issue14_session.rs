//! `ddt::Session`, the interactive loop for a real person (issue 14): the
//! query stands until it is answered, answers are checked before they change
//! anything, a contradicting triplet is refused with a minimal conflict named,
//! undo takes back exactly the last answer, strategies choose the promised
//! subsets, and a session rebuilt from its answers continues from them.

use trellis::ddt::{
    Answer, Dataset, Ddt, Params, QueryOptions, Rejection, Session, Strategy, Triplet,
};

/// Twelve points in two groups: 0..6 near 0, 6..12 near 5.
fn model() -> Ddt {
    let names = (0..12).map(|i| format!("p{i}")).collect();
    let rows = (0..12)
        .map(|i| {
            let base = if i < 6 { 0.0 } else { 5.0 };
            vec![base + 0.1 * (i % 6) as f64, 0.5 * base]
        })
        .collect();
    let points = Dataset::new(names, rows).unwrap();
    let params = Params::reference(&points, vec![1.0, 1.0], 0.01);
    Ddt::new(&points, params).unwrap()
}

fn session(strategy: Strategy, answers: Vec<Answer>) -> Session {
    Session::new(model(), strategy, QueryOptions::default(), answers, None, 7).unwrap()
}

fn t(a: usize, b: usize, c: usize) -> Triplet {
    Triplet::new(a, b, c).unwrap()
}

#[test]
fn query_stands_until_answered_and_each_strategy_shows_its_subset() {
    for (strategy, size) in [
        (Strategy::Random, 10),
        (Strategy::Active, 10),
        (Strategy::Interleaved, 10),
        (Strategy::Simple, 3),
        (Strategy::Smart, 12),
    ] {
        let mut s = session(strategy, vec![]);
        assert!(s.current().is_none(), "no query before one is asked");
        s.run(50);
        let q = s.query().clone();
        assert_eq!(q.points().len(), size, "{strategy:?}");
        assert!(q.points().windows(2).all(|w| w[0] < w[1]), "ascending");
        assert_eq!(q.strategy(), strategy);
        // Running the sampler does not change the shown query.
        s.run(50);
        assert_eq!(s.query(), &q, "{strategy:?}: the same query until answered");
        assert_eq!(s.current(), Some(&q));
        // Its Newick names exactly the shown points.
        let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
        let newick = q.to_newick(&names);
        assert!(newick.ends_with(';'));
        for &p in q.points() {
            assert!(newick.contains(&format!("p{p}:")), "{newick}");
        }
        s.apply(Answer::Accept).unwrap();
        assert!(s.current().is_none(), "an answer drops the query");
        assert_eq!(s.iterations_since_change(), 0);
    }
}

#[test]
fn vanilla_strategy_and_bad_options_are_refused() {
    let e = Session::new(
        model(),
        Strategy::Vanilla,
        QueryOptions::default(),
        vec![],
        None,
        1,
    )
    .unwrap_err();
    assert!(e.to_string().contains("vanilla"), "{e}");
    let small = QueryOptions {
        subset_size: 2,
        ..QueryOptions::default()
    };
    assert!(Session::new(model(), Strategy::Random, small, vec![], None, 1).is_err());
    let mut s = session(Strategy::Random, vec![]);
    assert!(s.set_strategy(Strategy::Vanilla).is_err());
    assert_eq!(s.strategy(), Strategy::Random);
}

#[test]
fn answers_without_a_query_or_outside_it_change_nothing() {
    let mut s = session(Strategy::Simple, vec![]);
    assert_eq!(s.apply(Answer::Accept), Err(Rejection::NoQuery));
    let q = s.query().clone();
    let outside = (0..12).find(|p| !q.points().contains(p)).unwrap();
    let [a, b, _] = [q.points()[0], q.points()[1], q.points()[2]];
    assert_eq!(
        s.apply(Answer::Triplet(t(a, b, outside))),
        Err(Rejection::NotInQuery(outside))
    );
    assert!(s.answers().is_empty());
    assert!(s.constraints().is_empty());
    assert_eq!(s.current(), Some(&q), "the query stands");
}

#[test]
fn a_triplet_is_enforced_and_the_tree_satisfies_it() {
    let mut s = session(Strategy::Smart, vec![]);
    s.query();
    // Against the data: 0 goes with 6, apart from 1.
    assert_eq!(s.apply(Answer::Triplet(t(0, 6, 1))), Ok(1));
    assert!(s.tree().satisfies(&t(0, 6, 1)));
    s.run(500);
    assert!(s.tree().satisfies(&t(0, 6, 1)), "the chain keeps it");
    // The same triplet again (either order of the pair) counts once.
    s.query();
    assert_eq!(s.apply(Answer::Triplet(t(6, 0, 1))), Ok(1));
    assert_eq!(s.answers().len(), 2);
}

#[test]
fn a_contradicting_triplet_is_refused_with_a_minimal_conflict() {
    let mut s = session(Strategy::Smart, vec![]);
    for tr in [t(0, 1, 6), t(7, 8, 2), t(2, 3, 11)] {
        s.query();
        s.apply(Answer::Triplet(tr)).unwrap();
    }
    s.query();
    // ({0, 6}, 1) contradicts ({0, 1}, 6) and nothing else.
    let r = s.apply(Answer::Triplet(t(0, 6, 1)));
    assert_eq!(r, Err(Rejection::Conflict(vec![t(0, 1, 6)])));
    assert_eq!(s.check(&Answer::Triplet(t(6, 0, 1))), r.map(|_| ()));
    assert_eq!(s.conflicts(t(0, 6, 1)), Some(vec![t(0, 1, 6)]));
    assert_eq!(s.conflicts(t(0, 1, 2)), None);
    // Nothing changed, and the query stands.
    assert_eq!(s.constraints().len(), 3);
    assert_eq!(s.answers().len(), 3);
    assert!(s.current().is_some());
    let text = Rejection::Conflict(vec![t(0, 1, 6)]).to_string();
    assert!(text.contains("({0, 1}, 6)"), "{text}");
}

#[test]
fn undo_takes_back_exactly_the_last_answer() {
    let mut s = session(Strategy::Smart, vec![]);
    assert_eq!(s.undo(), None, "nothing to undo");
    for a in [
        Answer::Triplet(t(0, 1, 6)),
        Answer::Accept,
        Answer::Triplet(t(7, 8, 2)),
        Answer::Triplet(t(0, 1, 6)),
    ] {
        s.query();
        s.apply(a).unwrap();
    }
    assert_eq!(s.constraints().len(), 2);
    // The repeated triplet was given earlier too: it stays in force.
    assert_eq!(s.undo(), Some(Answer::Triplet(t(0, 1, 6))));
    assert_eq!(s.constraints().len(), 2);
    assert_eq!(s.undo(), Some(Answer::Triplet(t(7, 8, 2))));
    assert_eq!(s.constraints(), &[t(0, 1, 6)]);
    assert!(s.current().is_none(), "undo drops the query");
    assert_eq!(s.undo(), Some(Answer::Accept));
    assert_eq!(s.constraints(), &[t(0, 1, 6)]);
    // After undo a triplet that contradicted the undone one is allowed.
    s.query();
    assert_eq!(s.apply(Answer::Triplet(t(7, 2, 8))), Ok(2));
    s.run(200);
    assert!(s.tree().satisfies(&t(7, 2, 8)) && s.tree().satisfies(&t(0, 1, 6)));
}

#[test]
fn a_session_rebuilt_from_its_answers_continues_from_them() {
    let answers = vec![
        Answer::Triplet(t(0, 6, 1)),
        Answer::Accept,
        Answer::Triplet(t(7, 8, 2)),
    ];
    let mut first = session(Strategy::Smart, vec![]);
    for a in &answers {
        first.query();
        first.apply(*a).unwrap();
    }
    first.run(300);
    let tree = first.tree().clone();
    // From the last tree: it is kept as it is.
    let again = Session::new(
        model(),
        Strategy::Smart,
        QueryOptions::default(),
        answers.clone(),
        Some(tree.clone()),
        9,
    )
    .unwrap();
    assert_eq!(again.answers(), &answers[..]);
    assert_eq!(again.constraints(), first.constraints());
    let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    assert_eq!(again.tree().to_newick(&names), tree.to_newick(&names));
    // Without a tree (or with one that breaks a constraint): BUILD's tree.
    let fresh = session(Strategy::Smart, answers.clone());
    for c in fresh.constraints() {
        assert!(fresh.tree().satisfies(c));
    }
    // Answers that cannot all hold are refused.
    let bad = vec![Answer::Triplet(t(0, 1, 6)), Answer::Triplet(t(0, 6, 1))];
    assert!(
        Session::new(
            model(),
            Strategy::Smart,
            QueryOptions::default(),
            bad,
            None,
            1
        )
        .is_err()
    );
}
