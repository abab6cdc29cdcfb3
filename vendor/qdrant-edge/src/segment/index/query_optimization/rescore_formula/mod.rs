mod formula_scorer;
pub mod parsed_formula;
pub(crate) mod value_retriever;

pub use formula_scorer::FormulaScorer;
