package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/table"
	"charm.land/lipgloss/v2"
)

// styles are every style the dashboard draws with. A style writes its
// colours in full; the program lowers them to what the terminal can show
// when it writes a frame (bubbletea's colour profile: none at all with
// NO_COLOR or off a terminal), and tests lower them to a fixed profile so
// frames are the same on every machine.
type styles struct {
	title, tab, tabActive lipgloss.Style
	dim, label, heading   lipgloss.Style
	good, warn, bad       lipgloss.Style
	banner, notice        lipgloss.Style
	prompt, input         lipgloss.Style
	bar, spark            lipgloss.Style
	table                 table.Styles
	help                  help.Styles
}

// Colours are ANSI 16 indexes, so a terminal's own palette decides the
// shades and the frame reads on light and dark backgrounds alike: nothing
// depends on the background, so the terminal is never asked for it.
const (
	colRed     = lipgloss.Red
	colGreen   = lipgloss.Green
	colYellow  = lipgloss.Yellow
	colBlue    = lipgloss.Blue
	colMagenta = lipgloss.Magenta
	colCyan    = lipgloss.Cyan
	colWhite   = lipgloss.BrightWhite
	colGrey    = lipgloss.BrightBlack
)

func newStyles() styles {
	s := styles{
		title:     lipgloss.NewStyle().Bold(true).Foreground(colCyan),
		tab:       lipgloss.NewStyle().Foreground(colGrey),
		tabActive: lipgloss.NewStyle().Bold(true).Reverse(true),
		dim:       lipgloss.NewStyle().Foreground(colGrey),
		label:     lipgloss.NewStyle().Bold(true),
		heading:   lipgloss.NewStyle().Bold(true).Foreground(colBlue),
		good:      lipgloss.NewStyle().Foreground(colGreen),
		warn:      lipgloss.NewStyle().Foreground(colYellow),
		bad:       lipgloss.NewStyle().Bold(true).Foreground(colRed),
		banner:    lipgloss.NewStyle().Bold(true).Foreground(colWhite).Background(colRed),
		notice:    lipgloss.NewStyle().Foreground(colGreen),
		prompt:    lipgloss.NewStyle().Bold(true).Foreground(colYellow),
		input:     lipgloss.NewStyle().Underline(true),
		bar:       lipgloss.NewStyle().Foreground(colCyan),
		spark:     lipgloss.NewStyle().Foreground(colMagenta),
	}
	s.table = table.Styles{
		Header:   lipgloss.NewStyle().Bold(true).Foreground(colBlue).PaddingRight(1),
		Cell:     lipgloss.NewStyle().PaddingRight(1),
		Selected: lipgloss.NewStyle().Reverse(true),
	}
	key, desc, sep := lipgloss.NewStyle().Bold(true), lipgloss.NewStyle().Foreground(colGrey), lipgloss.NewStyle().Foreground(colGrey)
	s.help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	return s
}
