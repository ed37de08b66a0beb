-- The "shop" example: a small schema that changes over time, as a MariaDB binlog would carry it.
CREATE DATABASE shop DEFAULT CHARACTER SET utf8mb4;
USE shop;

CREATE TABLE customers (
  id          INT UNSIGNED NOT NULL AUTO_INCREMENT,
  email       VARCHAR(120) NOT NULL,
  name        VARCHAR(80) CHARACTER SET latin1,
  tier        ENUM('basic','gold') NOT NULL DEFAULT 'basic',
  created_at  DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uq_email (email)
) ENGINE=InnoDB;

CREATE TABLE orders (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  customer_id INT UNSIGNED NOT NULL,
  total       DECIMAL(10,2) NOT NULL DEFAULT 0.00,
  flags       SET('gift','express','fragile') NOT NULL DEFAULT '',
  placed      DATE,
  PRIMARY KEY (id),
  CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customers (id)
) ENGINE=InnoDB;

INSERT INTO customers (email, name) VALUES ('ann@example.com', 'Ann');

ALTER TABLE customers
  MODIFY tier ENUM('basic','silver','gold') NOT NULL DEFAULT 'basic',
  ADD COLUMN phone VARCHAR(20) AFTER email;
ALTER TABLE orders CHANGE placed placed_on DATE NOT NULL, ADD COLUMN note TEXT;
RENAME TABLE orders TO purchases;
ALTER TABLE customers CONVERT TO CHARACTER SET utf8mb4;
