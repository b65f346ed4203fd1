package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key the dashboard answers, defined once: Update matches
// against these bindings and the help (the footer and `?`) is drawn from
// them, so the two cannot disagree.
type keyMap struct {
	Next, Prev, Help, Quit, ForceQuit key.Binding

	Up, Down, PageUp, PageDown, Top, Bottom key.Binding

	Sort, Reverse, Filter, Clear key.Binding

	Replay, BySchedule, Yes, No key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Next:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "keys")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),

		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),

		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "cycle sort")),
		Reverse: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter by name")),
		Clear:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),

		Replay:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "replay entry")),
		BySchedule: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "only its schedule")),
		Yes:        key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "confirm")),
		No:         key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "cancel")),
	}
}

// forView is a copy of k with only the bindings that act in view v
// enabled; the help shows enabled bindings only.
func (k keyMap) forView(v view) keyMap {
	list := v == viewSchedules || v == viewDLQ
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(list)
	}
	for _, b := range []*key.Binding{&k.Sort, &k.Reverse, &k.Filter} {
		b.SetEnabled(v == viewSchedules)
	}
	for _, b := range []*key.Binding{&k.Replay, &k.BySchedule} {
		b.SetEnabled(v == viewDLQ)
	}
	k.Clear.SetEnabled(list)
	k.Yes.SetEnabled(v == viewDLQ)
	k.No.SetEnabled(v == viewDLQ)
	k.ForceQuit.SetEnabled(false) // q says it; ctrl+c works too
	return k
}

// ShortHelp is the footer: the keys of the view at hand.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Next, k.Up, k.Down, k.Sort, k.Filter, k.Replay, k.BySchedule, k.Help, k.Quit}
}

// FullHelp is what `?` shows, by column.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Next, k.Prev, k.Help, k.Quit},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Sort, k.Reverse, k.Filter, k.Clear},
		{k.Replay, k.BySchedule, k.Yes, k.No},
	}
}
