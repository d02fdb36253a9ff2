use arena_kit::soa::serde::named_columns;
use arena_kit::{Soa, SoaVec};

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

/// Plain and `Serialize` itself, through the nested row's public parts only.
#[derive(Soa)]
#[soa(plain)]
pub struct Seat {
    #[soa(nested)]
    pub login: account::Login,
}

impl serde::Serialize for Seat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.login.user.serialize(s)
    }
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Seat { login: account::Login::new(7) });
    // The named columns write the nested row's private column too: a nested row that is not
    // `Serialize` and plain itself must not be written that way.
    let leaked = named_columns::serialize(&v, serde_json::value::Serializer).unwrap();
    println!("{leaked}");
}
