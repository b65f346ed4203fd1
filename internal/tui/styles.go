package tui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"
)

// styles are every style the dashboard draws with, built once from one
// renderer: its colour profile decides whether any escape code is written
// (none with NO_COLOR or on a terminal without colours), and tests pin it so
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
// shades and the frame reads on light and dark backgrounds alike.
const (
	colRed     = lipgloss.Color("1")
	colGreen   = lipgloss.Color("2")
	colYellow  = lipgloss.Color("3")
	colBlue    = lipgloss.Color("4")
	colMagenta = lipgloss.Color("5")
	colCyan    = lipgloss.Color("6")
	colWhite   = lipgloss.Color("15")
	colGrey    = lipgloss.Color("8")
)

func newStyles(r *lipgloss.Renderer) styles {
	s := styles{
		title:     r.NewStyle().Bold(true).Foreground(colCyan),
		tab:       r.NewStyle().Foreground(colGrey),
		tabActive: r.NewStyle().Bold(true).Reverse(true),
		dim:       r.NewStyle().Foreground(colGrey),
		label:     r.NewStyle().Bold(true),
		heading:   r.NewStyle().Bold(true).Foreground(colBlue),
		good:      r.NewStyle().Foreground(colGreen),
		warn:      r.NewStyle().Foreground(colYellow),
		bad:       r.NewStyle().Bold(true).Foreground(colRed),
		banner:    r.NewStyle().Bold(true).Foreground(colWhite).Background(colRed),
		notice:    r.NewStyle().Foreground(colGreen),
		prompt:    r.NewStyle().Bold(true).Foreground(colYellow),
		input:     r.NewStyle().Underline(true),
		bar:       r.NewStyle().Foreground(colCyan),
		spark:     r.NewStyle().Foreground(colMagenta),
	}
	s.table = table.Styles{
		Header:   r.NewStyle().Bold(true).Foreground(colBlue).PaddingRight(1),
		Cell:     r.NewStyle().PaddingRight(1),
		Selected: r.NewStyle().Reverse(true),
	}
	key, desc, sep := r.NewStyle().Bold(true), r.NewStyle().Foreground(colGrey), r.NewStyle().Foreground(colGrey)
	s.help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	return s
}
