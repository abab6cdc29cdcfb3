mod int;
mod str;
mod uuid;
