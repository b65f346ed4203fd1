package config

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// header is the comment a new file starts with.
const header = `schedctl's contexts: which schedd to reach, and how (schedctl context --help).
It holds no token: a context names a token_file or a token_command.`

// encode is the file as YAML: the document as read, changed where f
// differs from it, so that comments on what did not change stay; a new
// context is added at the end.
func (f *File) encode() ([]byte, error) {
	doc := f.doc
	if doc == nil || len(doc.Content) == 0 {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{}}, HeadComment: header}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		*root = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if f.CurrentContext == "" {
		removeKey(root, "current_context")
	} else {
		setKey(root, "current_context", str(f.CurrentContext))
	}
	if len(f.Contexts) == 0 {
		removeKey(root, "contexts")
	} else {
		ctxs := valueOf(root, "contexts")
		if ctxs == nil || ctxs.Kind != yaml.MappingNode {
			ctxs = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			setKey(root, "contexts", ctxs)
		}
		for i := 0; i+1 < len(ctxs.Content); {
			if _, keep := f.Contexts[ctxs.Content[i].Value]; keep {
				i += 2
				continue
			}
			ctxs.Content = append(ctxs.Content[:i], ctxs.Content[i+2:]...)
		}
		for _, name := range f.Names() {
			var n yaml.Node
			if err := n.Encode(f.Contexts[name]); err != nil {
				return nil, err
			}
			if old := valueOf(ctxs, name); old != nil && old.Kind == yaml.MappingNode {
				merge(old, &n)
			} else {
				setKey(ctxs, name, &n)
			}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// str is a string scalar, quoted when it would read as something else
// (a name such as "true" or "null").
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// index is the position of key's key node in mapping m, or -1.
func index(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

func valueOf(m *yaml.Node, key string) *yaml.Node {
	if i := index(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// setKey sets key's value in mapping m, keeping the comments of the value
// it replaces; a new key goes at the end.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	i := index(m, key)
	if i < 0 {
		m.Content = append(m.Content, str(key), v)
		return
	}
	old := m.Content[i+1]
	if v.HeadComment == "" && v.LineComment == "" && v.FootComment == "" {
		v.HeadComment, v.LineComment, v.FootComment = old.HeadComment, old.LineComment, old.FootComment
	}
	m.Content[i+1] = v
}

func removeKey(m *yaml.Node, key string) {
	if i := index(m, key); i >= 0 {
		m.Content = append(m.Content[:i], m.Content[i+2:]...)
	}
}

// merge makes mapping dst hold what src holds: its keys in their order,
// then src's new keys; keys src lacks are removed.
func merge(dst, src *yaml.Node) {
	for i := 0; i+1 < len(dst.Content); {
		if index(src, dst.Content[i].Value) < 0 {
			dst.Content = append(dst.Content[:i], dst.Content[i+2:]...)
			continue
		}
		i += 2
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		setKey(dst, src.Content[i].Value, src.Content[i+1])
	}
}
