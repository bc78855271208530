import CodeMirror from '@uiw/react-codemirror';
import { yaml } from '@codemirror/lang-yaml';

const extensions = [yaml()];

/** CodeMirror 6 with YAML highlighting; read-only for display. */
export function YamlEditor({
  value,
  onChange,
  readOnly = false,
  label,
  height = '420px',
}: {
  value: string;
  onChange?: (v: string) => void;
  readOnly?: boolean;
  label: string;
  height?: string;
}) {
  return (
    <CodeMirror
      value={value}
      height={height}
      extensions={extensions}
      editable={!readOnly}
      readOnly={readOnly}
      onChange={onChange}
      basicSetup={{ foldGutter: false }}
      aria-label={label}
      style={{ border: '1px solid #ccc', borderRadius: 4, fontSize: 13 }}
    />
  );
}
