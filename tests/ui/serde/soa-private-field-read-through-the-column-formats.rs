use arena_kit::SoaVec;
use arena_kit::soa::serde::columns;

mod account {
    use arena_kit::Soa;

    /// A login whose token no other module may read. Neither `Serialize` nor plain.
    #[derive(Soa)]
    pub struct Login {
        pub user: u32,
        token: u64,
    }

    impl Login {
        pub fn new(user: u32) -> Login {
            Login { user, token: 0x5EC2_E7 }
        }
    }
}

fn main() {
    let mut v = SoaVec::new();
    v.push(account::Login::new(7));
    // The column format writes every column, private ones too: a row that is not
    // `Serialize` and plain must not be written that way.
    let leaked = columns::serialize(&v, serde_json::value::Serializer).unwrap();
    println!("{leaked}");
}
