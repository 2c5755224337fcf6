//! What a trace says, made safe to show: every string a record carries
//! passes the one rule of [`crate::util::text`] before the reader keeps it, so a
//! crafted trace cannot write terminal escapes through `report` or
//! `compare`, break the XML of a plot, or reorder a name in the UI.

use super::records::Record;
use crate::util::text::clean_in_place;

/// `record` with every string field cleaned.
pub fn clean(mut record: Record) -> Record {
    match &mut record {
        Record::Header(h) => {
            for s in [
                &mut h.format,
                &mut h.writer,
                &mut h.host.os,
                &mut h.host.hostname,
            ] {
                clean_in_place(s);
            }
            h.command.iter_mut().flatten().for_each(clean_in_place);
        }
        Record::Sample(ts) => {
            for p in &mut ts.sample.processes {
                clean_in_place(&mut p.name);
                p.cmdline.iter_mut().for_each(clean_in_place);
            }
            if let Some(scope) = &mut ts.sample.scope {
                clean_in_place(&mut scope.path);
            }
        }
        Record::Flag(f) => {
            clean_in_place(&mut f.name);
            clean_in_place(&mut f.message);
        }
        Record::Event(e) => {
            clean_in_place(&mut e.kind);
            clean_in_place(&mut e.message);
        }
        // `check` refuses a name the rule would change; cleaned all the same,
        // so that this stays the one place every string passes.
        Record::Mark(m) => clean_in_place(&mut m.name),
        Record::Counter(c) => {
            clean_in_place(&mut c.name);
            clean_in_place(&mut c.unit);
        }
    }
    record
}
