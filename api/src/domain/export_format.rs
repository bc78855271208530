//! The file formats of usage exports. `exports.format` stores [`ExportFormat::as_str`] (also the
//! file's extension); a test checks that column's CHECK against [`ExportFormat::ALL`].

named_enum! {
    /// A FOCUS export's file format.
    pub enum ExportFormat("export format") {
        /// FOCUS 1.2 as CSV.
        FocusCsv = "csv",
        /// FOCUS 1.2 as JSON Lines.
        FocusJsonl = "jsonl",
    }
}

impl ExportFormat {
    /// The HTTP `Content-Type` of the file.
    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::FocusCsv => "text/csv; charset=utf-8",
            ExportFormat::FocusJsonl => "application/x-ndjson",
        }
    }
}
