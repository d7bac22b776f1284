//! Issue 24, item 5: items as pictures (`serve --images COLUMN`). The route
//! serves each point's file, byte for byte, with its type; the column is not
//! a feature; a missing column, a missing file, a path that escapes the CSV's
//! directory (`..`, absolute, a symbolic link), a file that is no image or
//! whose contents contradict its extension stop the server at start, with
//! the row and the point named, before the database is created.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use trellis_web::{Config, Running};

use super::{config, get, start};

/// A GET with the raw body bytes: (status, lower-case head, body).
fn get_bytes(addr: SocketAddr, path: &str, host: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&out[..split]).to_ascii_lowercase();
    let body = out[split + 4..].to_vec();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head, body)
}

fn local(addr: SocketAddr) -> String {
    format!("127.0.0.1:{}", addr.port())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim())
    })
}

fn with_images(dir: &Path, points: PathBuf, column: &str) -> Config {
    Config {
        images: Some(column.into()),
        ..config(dir, points)
    }
}

/// The smallest files of each type (their signatures and a little more).
fn samples() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(b"\0\0\0\rIHDR fake but signed");
    let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0];
    jpeg.extend_from_slice(b"\0\x10JFIF\0");
    vec![
        ("a.png", "image/png", png),
        ("b.JPG", "image/jpeg", jpeg.clone()),
        ("c.jpeg", "image/jpeg", jpeg),
        ("d.gif", "image/gif", b"GIF89a\x01\0\x01\0\0\0\0;".to_vec()),
        ("e.webp", "image/webp", b"RIFF\x1a\0\0\0WEBPVP8L....".to_vec()),
        (
            "f.svg",
            "image/svg+xml",
            b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"/>\n"
                .to_vec(),
        ),
    ]
}

/// A CSV of one point per sample (the image in `pics/`), `x` the feature.
fn gallery(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("pics")).unwrap();
    let mut csv = String::from("name,pic,x,y\n");
    for (i, (file, _, bytes)) in samples().iter().enumerate() {
        std::fs::write(dir.join("pics").join(file), bytes).unwrap();
        csv += &format!("p{i},pics/{file},{},{}\n", i as f64, (i * i) as f64 * 0.5);
    }
    let p = dir.join("gallery.csv");
    std::fs::write(&p, csv).unwrap();
    p
}

#[test]
fn issue24_images_are_served_byte_for_byte_with_their_type() {
    let dir = tempfile::tempdir().unwrap();
    let points = gallery(dir.path());
    let server = start(&with_images(dir.path(), points, "PIC"));
    let addr = server.addr;
    let (status, s) = get(addr, "/api/session");
    assert_eq!(status, 200, "{s}");
    let samples = samples();
    for (i, (file, ty, bytes)) in samples.iter().enumerate() {
        assert_eq!(s["images"][i], format!("/api/item/{i}/image"), "{s}");
        assert_eq!(s["hover"][i], "", "the picture is the hover");
        let (status, head, body) = get_bytes(addr, &format!("/api/item/{i}/image"), &local(addr));
        assert_eq!(status, 200, "{file}: {head}");
        assert_eq!(header(&head, "content-type"), Some(*ty), "{file}");
        assert_eq!(&body, bytes, "{file}: the file's bytes");
        let csp = header(&head, "content-security-policy").unwrap();
        assert!(
            csp.contains("sandbox") && csp.contains("default-src 'none'"),
            "{csp}"
        );
        assert_eq!(header(&head, "x-content-type-options"), Some("nosniff"));
    }
    // No other index, no path, and the Host guard holds.
    let n = samples.len();
    for path in [
        format!("/api/item/{n}/image"),
        "/api/item/-1/image".into(),
        "/api/item/x/image".into(),
        "/api/item/0/../../gallery.csv".into(),
        "/api/item/pics%2Fa.png/image".into(),
    ] {
        let (status, head, _) = get_bytes(addr, &path, &local(addr));
        assert_eq!(status, 404, "{path}: {head}");
    }
    let (status, _, _) = get_bytes(addr, "/api/item/0/image", "evil.example:80");
    assert_eq!(status, 403, "a foreign Host is refused");
    server.stop().unwrap();
}

#[test]
fn issue24_the_image_column_is_no_feature_and_without_the_flag_no_image_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let points = gallery(dir.path());
    let data = trellis_web::app::Data::read_with(&points, Some("pic")).unwrap();
    assert_eq!(data.points.row(3), [3.0, 4.5], "x and y only");
    assert_eq!(data.image_paths.as_ref().unwrap()[0], "pics/a.png");
    // Without --images, the column of paths is no number: the server refuses
    // to start rather than read it as a feature.
    assert!(Running::start(config(dir.path(), points.clone())).is_err());
    // The digits example: 100 points, the `image` column out of the features.
    let digits = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/digits/points.csv");
    let header = std::fs::read_to_string(&digits).unwrap();
    let width = header.lines().next().unwrap().split(',').count();
    let data = trellis_web::app::Data::read_with(&digits, Some("image")).unwrap();
    assert_eq!(data.points.len(), 100);
    assert_eq!(
        data.points.row(0).len(),
        width - 2,
        "name and image are no features"
    );
    // An inline-image CSV without --images: the image route has nothing.
    let plain = dir.path().join("plain.csv");
    std::fs::write(&plain, "name,x\na,0\nb,1\nc,2\nd,3\n").unwrap();
    let server = start(&config(dir.path(), plain));
    let (status, _, _) = get_bytes(server.addr, "/api/item/0/image", &local(server.addr));
    assert_eq!(status, 404);
    server.stop().unwrap();
}

#[test]
fn issue24_the_digits_example_serves_its_pngs() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/digits");
    let server = start(&with_images(dir.path(), root.join("points.csv"), "image"));
    let addr = server.addr;
    let (_, s) = get(addr, "/api/session");
    let names = s["names"].as_array().unwrap();
    assert_eq!(names.len(), 100);
    for i in [0, 57, 99] {
        let name = names[i].as_str().unwrap();
        let want = std::fs::read(root.join("images").join(format!("{name}.png"))).unwrap();
        let (status, head, body) = get_bytes(addr, &format!("/api/item/{i}/image"), &local(addr));
        assert_eq!(status, 200);
        assert_eq!(header(&head, "content-type"), Some("image/png"));
        assert_eq!(body, want, "point {i} ({name})");
    }
    server.stop().unwrap();
}

/// Starts with `csv` (its image column `pic`); the startup error, which
/// must come before the database exists.
fn refused(dir: &Path, csv: &str) -> String {
    let points = dir.join("bad.csv");
    std::fs::write(&points, csv).unwrap();
    let c = with_images(dir, points, "pic");
    let e = Running::start(c.clone()).err().expect("refused");
    assert!(!c.db.exists(), "no database before the images are checked");
    format!("{e:#}")
}

#[test]
fn issue24_bad_image_columns_are_refused_naming_the_row() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("data");
    std::fs::create_dir_all(dir.join("pics")).unwrap();
    let png = samples()[0].2.clone();
    std::fs::write(dir.join("pics/ok.png"), &png).unwrap();
    std::fs::write(base.path().join("outside.png"), &png).unwrap();
    std::fs::write(dir.join("pics/text.png"), b"hello, not a picture").unwrap();
    std::fs::write(dir.join("pics/gif.png"), b"GIF89a\x01\0\x01\0\0\0\0;").unwrap();
    std::fs::write(dir.join("pics/notes.txt"), b"notes").unwrap();
    let outside = base.path().join("outside.png");
    let cases: Vec<(String, &[&str])> = vec![
        (
            "pics/missing.png".into(),
            &["row 2", "\"b\"", "cannot open"],
        ),
        ("../outside.png".into(), &["row 2", "`..`"]),
        ("pics/../../outside.png".into(), &["row 2", "`..`"]),
        (outside.display().to_string(), &["row 2", "absolute"]),
        ("pics/text.png".into(), &["row 2", "not of type image/png"]),
        (
            "pics/gif.png".into(),
            &["row 2", "says image/png", "image/gif"],
        ),
        ("pics/notes.txt".into(), &["row 2", "extension"]),
        ("pics".into(), &["row 2", "not a regular file"]),
        ("".into(), &["row 2", "empty"]),
    ];
    for (path, needles) in cases {
        let csv = format!("name,x,pic\na,0,pics/ok.png\nb,1,{path}\nc,2,pics/ok.png\n");
        let e = refused(&dir, &csv);
        for n in needles {
            assert!(e.contains(n), "{path:?}: {n:?} not in: {e}");
        }
        assert!(e.contains("--images pic"), "{e}");
    }
    // No such column.
    let e = refused(&dir, "name,x,picture\na,0,pics/ok.png\nb,1,pics/ok.png\n");
    assert!(e.contains("no column named \"pic\""), "{e}");
    // A symbolic link out of the directory.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, dir.join("pics/link.png")).unwrap();
        let e = refused(
            &dir,
            "name,x,pic\na,0,pics/ok.png\nb,1,pics/link.png\nc,2,pics/ok.png\n",
        );
        assert!(e.contains("row 2") && e.contains("outside"), "{e}");
        // A link that stays inside is fine.
        std::os::unix::fs::symlink(dir.join("pics/ok.png"), dir.join("pics/in.png")).unwrap();
        let points = dir.join("good.csv");
        std::fs::write(
            &points,
            "name,x,pic\na,0,pics/ok.png\nb,1,pics/in.png\nc,2,./pics/ok.png\n",
        )
        .unwrap();
        let server = start(&with_images(&dir, points, "pic"));
        let (status, _, body) = get_bytes(server.addr, "/api/item/1/image", &local(server.addr));
        assert_eq!((status, body), (200, png));
        server.stop().unwrap();
    }
}
