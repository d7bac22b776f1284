//! Issue 25: `--checkpoint DIR` on `logz`, `map`, `sample`, `marginals`,
//! `infer`, `summary` and `flat logz` / `flat map`: a run killed at
//! (pseudo-)random points resumes to the identical answer; a DIR of another run or a damaged level is
//! refused (exit 2); commands without checkpoints refuse the flag; a
//! checkpoint that cannot be written is exit 1.

use std::time::Duration;

use crate::util::{dir, fails, file, run, s, stdout, weights_csv};

/// Starts `trellis args...`, kills it (SIGKILL) after `ms` milliseconds
/// unless it has finished; whether it was killed.
fn kill_after(args: &[&str], ms: u64) -> bool {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("trellis"))
        .args(args)
        .env("TRELLIS_KERNEL", "portable")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    let killed = child.try_wait().unwrap().is_none();
    if killed {
        child.kill().unwrap();
    }
    child.wait().unwrap();
    killed
}

#[test]
fn issue25_killed_runs_resume_to_the_identical_answer() {
    let d = dir("issue25_resume");
    let w = file(&d, "w.csv", &weights_csv(20, 25));
    // `sample` draws from the same weight table as `logz`.
    for (cmd, extra) in [
        ("logz", &[][..]),
        ("map", &[][..]),
        ("sample", &["-n", "20", "--seed", "5"][..]),
    ] {
        let mut plain = vec![cmd, "--model", "hcc", "--weights", s(&w), "--json", "-q"];
        plain.extend(extra);
        let ck = d.join(format!("ck-{cmd}"));
        let mut args = plain.clone();
        args.extend(["--checkpoint", s(&ck)]);
        let plain = stdout(&plain);
        // Kill times from a fixed pseudo-random sequence (a linear congruence).
        let mut x: u64 = 12345;
        let mut kills = 0;
        for _ in 0..5 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            kills += usize::from(kill_after(&args, 20 + (x >> 33) % 400));
        }
        assert!(kills > 0, "{cmd}: no run was killed");
        assert_eq!(stdout(&args), plain, "{cmd} after {kills} kills");
        // Again, from the finished levels alone.
        assert_eq!(stdout(&args), plain, "{cmd} rerun");
    }
    // The same directory for another β is another run.
    let ck = d.join("ck-logz");
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--beta",
            "3",
            "--checkpoint",
            s(&ck),
        ],
        "another run",
    );
}

#[test]
fn issue25_checkpoint_refusals_and_failed_writes() {
    let d = dir("issue25_refuse");
    let w = file(&d, "w.csv", &weights_csv(8, 26));
    let t = file(&d, "t.txt", "0 1 2\n");
    let nonneg: String = weights_csv(8, 26)
        .lines()
        .map(|l| {
            l.split(',')
                .map(|v| v.trim_start_matches('-'))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let wp = file(&d, "wp.csv", &nonneg);
    let ck = d.join("ck");
    for args in [
        vec![
            "logz",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--sparse",
            "beam",
            "--checkpoint",
            s(&ck),
        ],
        vec![
            "marginals",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--sparse",
            "beam",
            "--checkpoint",
            s(&ck),
        ],
        vec![
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--sparse",
            "beam",
            "--triplets",
            s(&t),
            "--checkpoint",
            s(&ck),
        ],
        vec![
            "logz",
            "--model",
            "dasgupta",
            "--weights",
            s(&wp),
            "--checkpoint",
            s(&ck),
        ],
    ] {
        fails(&args, "checkpoint");
    }
    // A directory that cannot be made (a file is in the way): exit 1.
    let blocker = file(&d, "blocker", "");
    let out = run(&[
        "logz",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--checkpoint",
        s(&blocker),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the checkpoint"));
}

/// Kills `args` at pseudo-random times (a fixed linear congruence from
/// `seed`) five times, then runs it to the end twice: both runs print
/// `want`. Returns how many runs were killed.
fn killed_and_resumed(args: &[&str], want: &str, seed: u64) -> usize {
    let mut x = seed;
    let mut kills = 0;
    for _ in 0..5 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        kills += usize::from(kill_after(args, 20 + (x >> 33) % 600));
    }
    assert_eq!(stdout(args), want, "{args:?} after {kills} kills");
    assert_eq!(stdout(args), want, "{args:?} rerun");
    kills
}

#[test]
fn issue25_killed_marginals_resume_to_the_identical_answer() {
    let d = dir("issue25_resume_marginals");
    let w = file(&d, "w.csv", &weights_csv(20, 27));
    let ck = d.join("ck");
    let plain = [
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--min-p",
        "0.05",
        "--json",
        "-q",
    ];
    let want = stdout(&plain);
    let mut args = plain.to_vec();
    args.extend(["--checkpoint", s(&ck)]);
    assert!(
        killed_and_resumed(&args, &want, 777) > 0,
        "no run was killed"
    );
    // The weight and outside passes both left their levels (the marginals
    // alone start from the greedy tree's scale: no key pass).
    let names: Vec<String> = std::fs::read_dir(&ck)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for pass in ["weights-", "outside-h-"] {
        assert!(
            names.iter().any(|n| n.starts_with(pass)),
            "{pass}: {names:?}"
        );
    }
    // `logz` of the same input shares the directory; another β is refused.
    let logz = ["logz", "--model", "hcc", "--weights", s(&w), "--json", "-q"];
    let mut with_ck = logz.to_vec();
    with_ck.extend(["--checkpoint", s(&ck)]);
    assert_eq!(stdout(&with_ck), stdout(&logz));
    let mut other = args.clone();
    other.extend(["--beta", "3"]);
    fails(&other, "another run");
}

#[test]
fn issue25_killed_infer_summary_and_constrained_runs_resume() {
    // `infer` and `summary` run the passes of `marginals` (a summary adds its
    // own pass, which is recomputed): killed at random points, they resume.
    // So do `marginals` and `logz` under triplets (the restricted model's
    // tables are the fingerprint).
    let d = dir("issue25_resume_infer_summary");
    let w = file(&d, "w.csv", &weights_csv(20, 29));
    let t = file(&d, "t.txt", "0 1 2\n3 4 5\n6 7 0\n");
    for (i, cmd) in [
        &["infer", "--min-p", "0.05"][..],
        &["summary", "--kind", "mcc"],
        &["marginals", "--min-p", "0.05", "--triplets", s(&t)],
        &["logz", "--triplets", s(&t)],
    ]
    .into_iter()
    .enumerate()
    {
        let ck = d.join(format!("ck-{i}"));
        let mut plain = cmd.to_vec();
        plain.extend(["--model", "hcc", "--weights", s(&w), "--json", "-q"]);
        let want = stdout(&plain);
        let mut args = plain.clone();
        args.extend(["--checkpoint", s(&ck)]);
        assert!(
            killed_and_resumed(&args, &want, 900 + i as u64) > 0,
            "{}: no run was killed",
            cmd[0]
        );
    }
    // The commands without exact passes have no --checkpoint.
    let ck = d.join("ck-0");
    for cmd in ["greedy", "score", "astar"] {
        let mut args = vec![cmd, "--model", "hcc", "--weights", s(&w)];
        args.extend(["--checkpoint", s(&ck)]);
        if cmd == "score" {
            args.extend(["--tree", "[0,[1,2]]"]);
        }
        fails(&args, "--checkpoint");
    }
}

#[test]
fn issue25_killed_flat_logz_resumes_to_the_identical_answer() {
    let d = dir("issue25_resume_flat");
    let w = file(&d, "w.csv", &weights_csv(20, 28));
    for cmd in ["logz", "map"] {
        let ck = d.join(format!("ck-{cmd}"));
        let plain = [
            "flat",
            cmd,
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--json",
            "-q",
        ];
        let want = stdout(&plain);
        let mut args = plain.to_vec();
        args.extend(["--checkpoint", s(&ck)]);
        assert!(
            killed_and_resumed(&args, &want, 4242) > 0,
            "flat {cmd}: no run was killed"
        );
        let mut other = args.clone();
        other.extend(["--beta", "2"]);
        if cmd == "logz" {
            fails(&other, "another run");
        }
    }
    // A damaged level is refused, never used.
    let ck = d.join("ck-logz");
    let level = std::fs::read_dir(&ck)
        .unwrap()
        .map(|e| e.unwrap().path())
        // A finished level, not a killed run's stray temporary file.
        .find(|p| {
            let name = p.to_str().unwrap();
            name.contains("flat-weights-") && name.ends_with(".ckpt")
        })
        .unwrap();
    let mut bytes = std::fs::read(&level).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&level, &bytes).unwrap();
    fails(
        &[
            "flat",
            "logz",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--checkpoint",
            s(&ck),
        ],
        "checksum",
    );
    // The sparse families and Perturb-and-MAP keep none.
    for args in [
        vec![
            "flat",
            "logz",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--sparse",
            "tree",
        ],
        vec![
            "flat",
            "perturb-map",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "-n",
            "2",
        ],
    ] {
        let mut args = args;
        args.extend(["--checkpoint", s(&ck)]);
        fails(&args, "checkpoint");
    }
}
