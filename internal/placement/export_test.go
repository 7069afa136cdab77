package placement

// MaxSpells is maxSpells, for the tests of package placement_test.
const MaxSpells = maxSpells
