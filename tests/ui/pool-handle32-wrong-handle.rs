// A pool of 4-byte handles takes only its own handle type: not another value's `Handle32`, and
// not the 8-byte `Handle` of the same value type.
use arena_kit::pool::{Handle, Handle32, Pool};

struct Enemy;
struct Bullet;

fn main() {
    let mut enemies: Pool<Enemy, Handle32<Enemy>> = Pool::with_capacity_and_key(4);
    let mut bullets: Pool<Bullet, Handle32<Bullet>> = Pool::with_capacity_and_key(4);
    let bullet = bullets.insert(Bullet);
    let _ = enemies.get(bullet);
    let wide: Handle<Enemy> = Handle::null();
    let _ = enemies.remove(wide);
}
