// A `Handle<Bullet>` cannot look up a value in a `Pool<Enemy>`: the handle's type parameter says
// which pool type it belongs to.
use arena_kit::prelude::*;

struct Bullet;
struct Enemy;

fn main() {
    let mut bullets: Pool<Bullet> = Pool::with_capacity(4);
    let mut enemies: Pool<Enemy> = Pool::with_capacity(4);
    let bullet: Handle<Bullet> = bullets.insert(Bullet);
    let _ = enemies.get(bullet);
    let _ = enemies.remove(bullet);
}
