// Placeholder so the package loads while the module is written; removed once real sources exist.
