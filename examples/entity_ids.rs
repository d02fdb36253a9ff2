//! A game server keeps its entities in a `Pool::new()` (no capacity to guess) and gives clients
//! each entity's handle as a plain `u64` (`Handle::to_bits`). Client commands come back as those
//! numbers; `Handle::from_bits` turns them into handles again, and a number naming an entity that
//! despawned (or a made-up one) simply finds nothing. Prints what each command hit.
//!
//! Run: `cargo run --example entity_ids`.

use arena_kit::prelude::*;

#[derive(Debug)]
struct Entity {
    name: &'static str,
    hp: i32,
}

/// What the server answers to "hit entity `id` for `damage`".
fn hit(world: &mut Pool<Entity>, id: u64, damage: i32) -> String {
    let Some(handle) = Handle::from_bits(id) else {
        return format!("{id:#x}: not an entity id");
    };
    let Some(entity) = world.get_mut(handle) else {
        return format!("{id:#x}: no such entity (despawned?)");
    };
    entity.hp -= damage;
    if entity.hp > 0 {
        return format!("{id:#x}: {} has {} hp left", entity.name, entity.hp);
    }
    let gone = world.remove(handle).expect("just looked up");
    format!("{id:#x}: {} despawned", gone.name)
}

fn main() {
    let mut world: Pool<Entity> = Pool::new();
    assert_eq!(
        world.capacity(),
        0,
        "nothing allocated before the first spawn"
    );
    let spawned: Vec<u64> = [("orc", 10), ("bat", 3), ("troll", 30)]
        .into_iter()
        .map(|(name, hp)| world.insert(Entity { name, hp }).to_bits())
        .collect();
    println!("spawned {} entities, ids {spawned:x?}", world.len());

    let commands = [
        (spawned[1], 5), // kills the bat
        (spawned[1], 5), // the bat's id again: stale now
        (spawned[0], 4),
        (2 << 32, 1), // an even generation: no entity ever has it
        (spawned[2], 12),
    ];
    for (id, damage) in commands {
        println!("  {}", hit(&mut world, id, damage));
    }

    // A new spawn reuses the bat's slot with a new generation: the old id stays dead.
    let imp = world.insert(Entity { name: "imp", hp: 1 });
    assert_eq!(
        imp.index(),
        Handle::<Entity>::from_bits(spawned[1]).unwrap().index()
    );
    println!("  {}", hit(&mut world, spawned[1], 1));

    // Newest slots last: walk from the back to list the most recent first.
    let names: Vec<_> = world.values().rev().map(|e| e.name).collect();
    println!("alive, last slot first: {names:?}");
}
