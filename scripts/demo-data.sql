-- Sample data for scripts/demo: a small shop with a few thousand rows and several column types.
CREATE DATABASE IF NOT EXISTS shop;
USE shop;

CREATE TABLE customers (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(190) NOT NULL UNIQUE,
  name VARCHAR(100) NOT NULL,
  country CHAR(2) NOT NULL DEFAULT 'FR',
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;

CREATE TABLE products (
  sku VARCHAR(32) NOT NULL PRIMARY KEY,
  title VARCHAR(200) NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  status ENUM('draft','active','retired') NOT NULL DEFAULT 'active',
  attributes JSON
) ENGINE=InnoDB;

CREATE TABLE orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  sku VARCHAR(32) NOT NULL,
  quantity SMALLINT NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  paid BOOL NOT NULL DEFAULT FALSE,
  ordered_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  KEY (customer_id)
) ENGINE=InnoDB;

-- A log table: its key is invisible (no query or INSERT names it), because chsync refuses a table
-- without one, whose identical rows ClickHouse would keep once (docs/types.md, "Keys").
CREATE TABLE page_views (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY INVISIBLE,
  viewed_at DATETIME NOT NULL,
  path VARCHAR(255) NOT NULL,
  flags BIT(8) NOT NULL DEFAULT b'0'
) ENGINE=InnoDB;

INSERT INTO customers (email, name, country)
  SELECT CONCAT('user', seq, '@example.com'), CONCAT('Customer ', seq),
         ELT(1 + seq % 4, 'FR', 'DE', 'KR', 'US')
  FROM seq_1_to_2000;

INSERT INTO products (sku, title, price, status, attributes)
  SELECT CONCAT('SKU-', LPAD(seq, 5, '0')), CONCAT('Product ', seq), ROUND(1 + seq * 1.37, 2),
         ELT(1 + seq % 3, 'draft', 'active', 'retired'),
         JSON_OBJECT('color', ELT(1 + seq % 3, 'red', 'green', 'blue'), 'weight', seq % 17)
  FROM seq_1_to_300;

INSERT INTO orders (customer_id, sku, quantity, total, paid)
  SELECT 1 + seq % 2000, CONCAT('SKU-', LPAD(1 + seq % 300, 5, '0')), 1 + seq % 5,
         ROUND((1 + seq % 5) * (1 + (1 + seq % 300) * 1.37), 2), seq % 3 = 0
  FROM seq_1_to_5000;

INSERT INTO page_views (viewed_at, path, flags)
  SELECT TIMESTAMP('2026-01-01') + INTERVAL seq MINUTE, CONCAT('/products/', seq % 300), seq % 256
  FROM seq_1_to_1000;
